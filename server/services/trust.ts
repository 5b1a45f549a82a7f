// Trusted publishers (docs/api.md, "Trusted publishing"): made, listed, changed and deleted by
// administrators, each checked whole before it is stored: a pinned repository or job, an issuer and
// key set the server may reach, public keys only.
import { formatTimestamp } from '../../common/dates.js';
import { AppError } from '../../common/errors.js';
import {
  DEFAULT_ISSUERS,
  type Jwks,
  PINNING_CLAIMS,
  type TrustedPublisher,
  type TrustedPublisherCreateRequest,
  type TrustedPublisherUpdateRequest,
} from '../../common/schemas/trust.js';
import { addressRefusal } from '../auth/oidc-keys.js';
import { retryConflicts } from '../db/faults.js';
import { rememberRevoked } from '../db/revoked-tokens.js';
import { deleteTokensOfPublisher } from '../db/tokens.js';
import {
  type PublisherFields,
  type StoredPublisher,
  deletePublisher,
  findPublisher,
  insertPublisher,
  listPublishers,
  updatePublisher,
} from '../db/trusted-publishers.js';
import type { Services } from './context.js';

export function toTrustedPublisher(stored: StoredPublisher): TrustedPublisher {
  return {
    id: stored.id,
    projectName: stored.projectName,
    provider: stored.provider,
    issuer: stored.issuer,
    audience: stored.audience,
    claims: stored.claims,
    branches: stored.branches,
    environments: stored.environments,
    refClaim: stored.refClaim,
    jwks: stored.jwks,
    description: stored.description,
    createdAt: formatTimestamp(stored.createdAt),
    updatedAt: formatTimestamp(stored.updatedAt),
  };
}

const invalid = (path: string, message: string) => new AppError('validation', `${path}: ${message}`, { errors: [{ path, message }] });

/** A pattern that is only wildcards pins nothing. */
const pins = (pattern: string | undefined) => pattern !== undefined && pattern.replace(/\*/g, '') !== '';

/** Key members that only a private or symmetric key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

function checkJwks(jwks: Jwks): void {
  jwks.keys.forEach((key, i) => {
    const path = `jwks.keys.${i}`;
    const secret = PRIVATE_MEMBERS.find((m) => m in key);
    if (secret) throw invalid(path, `holds "${secret}": give the issuer's public keys only`);
    if (key.kty === 'RSA' ? typeof key.n !== 'string' || typeof key.e !== 'string' : key.kty === 'EC' ? typeof key.crv !== 'string' || typeof key.x !== 'string' || typeof key.y !== 'string' : true) {
      throw invalid(path, 'must be an RSA (kty, n, e) or EC (kty, crv, x, y) public key');
    }
  });
}

/** Checks a publisher whole (as made, or as a change leaves it); throws the 400 that says what is wrong. */
async function checkPublisher(services: Services, fields: PublisherFields): Promise<void> {
  const pinning = PINNING_CLAIMS[fields.provider];
  if (!pinning.some((claim) => pins(fields.claims[claim]))) {
    const advice = fields.provider === 'github' ? ' (with repository_owner_id advised: it survives renames and blocks the reuse of a name)' : '';
    throw invalid('claims', `a ${fields.provider} publisher must pin ${pinning.map((c) => `"${c}"`).join(' or ')} to a value that is not only wildcards${advice}`);
  }
  const refused = await addressRefusal(services.config.oidc.allowNetworks, fields.issuer);
  if (refused) throw invalid('issuer', refused);
  if (fields.jwks) checkJwks(fields.jwks);
}

function issuerOf(provider: PublisherFields['provider'], issuer: string | undefined): string {
  const chosen = issuer ?? DEFAULT_ISSUERS[provider];
  if (!chosen) throw invalid('issuer', `a ${provider} publisher must name its issuer (an https URL)`);
  return chosen;
}

export async function createPublisher(services: Services, request: TrustedPublisherCreateRequest): Promise<TrustedPublisher> {
  const fields: PublisherFields = {
    projectName: request.projectName,
    provider: request.provider,
    issuer: issuerOf(request.provider, request.issuer),
    audience: request.audience ?? services.config.oidc.audience,
    claims: request.claims,
    branches: request.branches ?? ['*'],
    environments: request.environments ?? null,
    refClaim: request.refClaim ?? null,
    jwks: request.jwks ?? null,
    description: request.description ?? null,
  };
  await checkPublisher(services, fields);
  return toTrustedPublisher(await insertPublisher(services.db, fields, services.now()));
}

export async function listTrustedPublishers(services: Services, projectName: string | undefined): Promise<TrustedPublisher[]> {
  return (await listPublishers(services.db, { projectName })).map(toTrustedPublisher);
}

export async function getPublisher(services: Services, id: string): Promise<TrustedPublisher> {
  return toTrustedPublisher(await findPublisher(services.db, id));
}

/** Changes the fields given; what it leaves is checked whole. Tokens already made keep working until they expire. */
export async function changePublisher(services: Services, id: string, change: TrustedPublisherUpdateRequest): Promise<TrustedPublisher> {
  const stored = await findPublisher(services.db, id);
  const fields: PublisherFields = {
    projectName: stored.projectName,
    provider: stored.provider,
    issuer: change.issuer ?? stored.issuer,
    audience: change.audience ?? stored.audience,
    claims: change.claims ?? stored.claims,
    branches: change.branches ?? stored.branches,
    environments: change.environments === undefined ? stored.environments : change.environments,
    refClaim: change.refClaim === undefined ? stored.refClaim : change.refClaim,
    jwks: change.jwks === undefined ? stored.jwks : change.jwks,
    description: change.description === undefined ? stored.description : change.description,
  };
  await checkPublisher(services, fields);
  return toTrustedPublisher(await updatePublisher(services.db, id, fields, services.now()));
}

/** Deletes a publisher and revokes the tokens its exchanges made: how many. */
export async function removePublisher(services: Services, id: string): Promise<{ publisher: TrustedPublisher; revoked: number }> {
  const publisher = await getPublisher(services, id);
  const revoked = await retryConflicts(() =>
    services.db.transaction(async (trx) => {
      const hashes = await deleteTokensOfPublisher(trx, id);
      await rememberRevoked(trx, hashes, 'revoked', services.now());
      if (!(await deletePublisher(trx, id))) throw new AppError('not_found', `no trusted publisher with id ${id}`);
      return hashes.length;
    }),
  );
  return { publisher, revoked };
}
