// The ID token exchange (docs/api.md, "Trusted publishing"): a pipeline's OpenID Connect ID token,
// verified completely with jose, matched against the trusted publishers, becomes a project token of
// a few minutes bound to one project and branch, which carries the provenance of the build.
//
// Order of the checks: size, header (algorithm, no embedded or linked key), issuer known, signature
// with the issuer's keys (server/auth/oidc-keys.ts), aud, exp, iat and nbf, lifetime, jti; then the
// publishers; then, in one transaction, the ID token is recorded as used and the project token made.
import { createHash, randomUUID } from 'node:crypto';
import { type JSONWebKeySet, type JWTPayload, type ProtectedHeaderParameters, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { formatTimestamp } from '../../common/dates.js';
import { globMatches } from '../../common/glob.js';
import { AppError } from '../../common/errors.js';
import type { Provenance } from '../../common/schemas/repositories.js';
import { EXCHANGED_SCOPES, ID_TOKEN_MAX_BYTES, type OidcExchangeRequest, type OidcExchanged, type Provider } from '../../common/schemas/trust.js';
import { USERNAME_MAX } from '../../common/schemas/users.js';
import { newProjectToken, hashProjectToken } from '../auth/project-tokens.js';
import { type IssuerKeyCache, type KeyLookup, issuerKeys, localKeys, newKeyCache } from '../auth/oidc-keys.js';
import { retryConflicts } from '../db/faults.js';
import { deleteExpiredOidcTokens, insertToken } from '../db/tokens.js';
import { type StoredPublisher, issuerKnown, publishersOfIssuer } from '../db/trusted-publishers.js';
import { forgetExpired, markUsed } from '../db/used-id-tokens.js';
import { findUserByName, insertUser } from '../db/users.js';
import type { Services } from './context.js';

/** Algorithms an ID token may be signed with: asymmetric only (no `none`, no HS*). */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384'];
/** How far ahead of the server's clock `iat` and `nbf` may be. */
export const CLOCK_SKEW_SECONDS = 60;
/** The longest an ID token may live (`exp - iat`). */
export const ID_TOKEN_MAX_LIFETIME_SECONDS = 3600;
/** Expired exchanged tokens stay this long, so that their use is told they expired; then they are deleted. */
const EXPIRED_TOKENS_KEPT_MS = 24 * 3600_000;
/** Header parameters that bring their own key: a token may not say which key checks it. */
const KEY_CARRYING_HEADERS = ['jwk', 'jku', 'x5u', 'x5c'] as const;

/** Each server's key cache (tests run several servers in one process). */
const caches = new WeakMap<object, IssuerKeyCache>();
export function keyCacheOf(services: Services): IssuerKeyCache {
  let cache = caches.get(services.config);
  if (!cache) caches.set(services.config, (cache = newKeyCache()));
  return cache;
}

/** What the audit entry of an exchange records: never the token. */
interface ExchangeAudit {
  publisherId?: string;
  iss?: string;
  sub?: string;
  jti?: string;
  reason?: string;
}

function refuse(code: 'unauthorized' | 'forbidden' | 'conflict', message: string, audit: ExchangeAudit): AppError {
  return new AppError(code, message, { audit: { ...audit, reason: message } });
}

/** A claim as text, for matching and messages: strings as they are, numbers and booleans written out. */
function claimText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** The ID token's ref as the provider writes it, and its branch (undefined for a tag or another ref). */
export function refOf(provider: Provider, claims: JWTPayload, refClaim: string | null): { ref: string | null; branch: string | undefined; tag: string | undefined } {
  const ref = claimText(claims[provider === 'github' || provider === 'gitlab' ? 'ref' : (refClaim ?? 'ref')]) ?? null;
  if (ref === null) return { ref, branch: undefined, tag: undefined };
  if (provider === 'gitlab') {
    // GitLab's `ref` is the bare name; `ref_type` says whether it is a branch or a tag.
    const type = claimText(claims.ref_type);
    if (type === 'tag') return { ref: `refs/tags/${ref}`, branch: undefined, tag: ref };
    if (type === 'branch') return { ref: `refs/heads/${ref}`, branch: ref, tag: undefined };
    return { ref, branch: undefined, tag: undefined };
  }
  if (ref.startsWith('refs/heads/')) return { ref, branch: ref.slice('refs/heads/'.length), tag: undefined };
  if (ref.startsWith('refs/tags/')) return { ref, branch: undefined, tag: ref.slice('refs/tags/'.length) };
  // github's ref of a pull request (refs/pull/N/merge) names no branch; jenkins and generic may give a bare name.
  if (provider === 'github' || ref.startsWith('refs/')) return { ref, branch: undefined, tag: undefined };
  return { ref: `refs/heads/${ref}`, branch: ref, tag: undefined };
}

/** The repository address a publish through the token must name (github, gitlab); null: the provider names none. */
function repositoryUrlOf(publisher: StoredPublisher, claims: JWTPayload): string | null {
  if (publisher.provider === 'github') {
    const repository = claimText(claims.repository);
    return repository ? `https://github.com/${repository}` : null;
  }
  if (publisher.provider === 'gitlab') {
    const path = claimText(claims.project_path);
    return path ? `${publisher.issuer.replace(/\/$/, '')}/${path}` : null;
  }
  return null;
}

/** The provenance of what the token publishes, from the verified claims (docs/api.md, "Provenance"). */
export function provenanceOf(publisher: StoredPublisher, claims: JWTPayload, ref: string | null, verifiedAt: Date): Provenance {
  const c = (name: string) => claimText(claims[name]) ?? null;
  const base = { issuer: publisher.issuer, subject: c('sub') ?? '', ref, publisherId: publisher.id, verifiedAt: formatTimestamp(verifiedAt) };
  switch (publisher.provider) {
    case 'github': {
      const repository = c('repository');
      const runId = c('run_id');
      return {
        ...base,
        repository,
        repositoryId: c('repository_id'),
        sha: c('sha'),
        workflow: c('workflow_ref'),
        runId,
        runUrl: repository && runId ? `https://github.com/${repository}/actions/runs/${runId}` : null,
        environment: c('environment'),
      };
    }
    case 'gitlab': {
      const path = c('project_path');
      const pipeline = c('pipeline_id');
      return {
        ...base,
        repository: path,
        repositoryId: c('project_id'),
        sha: c('sha'),
        workflow: c('ci_config_ref_uri'),
        runId: pipeline,
        runUrl: path && pipeline ? `${publisher.issuer.replace(/\/$/, '')}/${path}/-/pipelines/${pipeline}` : null,
        environment: c('environment'),
      };
    }
    default: {
      const sub = c('sub');
      const build = c('build_number');
      const jobUrl = sub && /^https?:\/\//.test(sub) ? (sub.endsWith('/') ? sub : `${sub}/`) : null;
      return {
        ...base,
        repository: null,
        repositoryId: null,
        sha: c('sha'),
        workflow: null,
        runId: build,
        runUrl: jobUrl && build ? `${jobUrl}${build}/` : null,
        environment: c('environment'),
      };
    }
  }
}

interface Mismatch {
  publisher: StoredPublisher;
  differences: string[];
}

/** What differs between the publisher and the token: nothing when it matches. */
function differences(publisher: StoredPublisher, claims: JWTPayload, audiences: string[]): string[] {
  const found: string[] = [];
  if (!audiences.includes(publisher.audience)) found.push(`aud: expected "${publisher.audience}", received ${JSON.stringify(audiences)}`);
  for (const [name, pattern] of Object.entries(publisher.claims)) {
    const value = claimText(claims[name]);
    if (value === undefined || !globMatches(pattern, value)) {
      found.push(`claim ${name}: expected "${pattern}", received ${value === undefined ? 'nothing' : JSON.stringify(value)}`);
    }
  }
  const { ref, branch, tag } = refOf(publisher.provider, claims, publisher.refClaim);
  if (tag === undefined) {
    if (branch === undefined) found.push(`branch: the ref ${JSON.stringify(ref)} names no branch or tag`);
    else if (!publisher.branches.some((b) => globMatches(b, branch))) {
      found.push(`branch: expected ${publisher.branches.map((b) => `"${b}"`).join(' or ')}, received "${branch}"`);
    }
  }
  return found;
}

/** Maps jose's refusals to what the 401 says. */
function verificationFailure(error: unknown, header: ProtectedHeaderParameters, issuer: string, audiences: string[]): string {
  if (error instanceof errors.JWTExpired) return 'the ID token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return `the ID token's aud does not contain ${audiences.map((a) => `"${a}"`).join(' or ')}`;
    if (error.claim === 'nbf') return `the ID token is not valid yet (nbf more than ${CLOCK_SKEW_SECONDS} s ahead)`;
    if (error.claim === 'iat') return `the ID token's iat is not a number`;
    return `the ID token's ${error.claim} is not valid: ${error.reason}`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return `no key of the issuer ${issuer} has the ID token's kid ${JSON.stringify(header.kid ?? null)} and alg ${header.alg}`;
  if (error instanceof errors.JWKSMultipleMatchingKeys) return `several keys of the issuer ${issuer} match the ID token's header: it names no kid`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return `the ID token's signature does not verify with the keys of the issuer ${issuer}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return `the ID token's algorithm ${header.alg} is not accepted`;
  if (error instanceof errors.JOSEError) return `the ID token is not valid: ${error.message}`;
  throw error;
}

/** The user a project's exchanged tokens act as: a user of the project that cannot log in, made when first needed. */
async function pipelineUser(services: Services, projectName: string): Promise<string> {
  let username = `oidc:${projectName}`;
  if (username.length > USERNAME_MAX) username = `oidc:${projectName.slice(0, USERNAME_MAX - 22)}~${createHash('sha256').update(projectName).digest('hex').slice(0, 16)}`;
  const existing = await findUserByName(services.db, username);
  if (existing) return existing.userId;
  // A name with ":" cannot be made through the API nor logged in with; the password hash is of random bytes no one knows.
  const passwordHash = await services.passwords.hash(randomUUID() + randomUUID());
  try {
    return await insertUser(services.db, { username, passwordHash, projectName, role: 'ROLE_USER', mustChangePassword: false });
  } catch (error) {
    const made = await findUserByName(services.db, username);
    if (made) return made.userId;
    throw error;
  }
}

/** What an exchange answers, and what its audit entry records. */
export async function exchangeIdToken(services: Services, request: OidcExchangeRequest): Promise<{ answer: OidcExchanged; audit: ExchangeAudit }> {
  const token = request.token;
  const audit: ExchangeAudit = {};
  if (Buffer.byteLength(token, 'utf8') > ID_TOKEN_MAX_BYTES) throw refuse('unauthorized', `the ID token is larger than ${ID_TOKEN_MAX_BYTES / 1024} KiB`, audit);
  let header: ProtectedHeaderParameters;
  let unverified: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    unverified = decodeJwt(token);
  } catch {
    throw refuse('unauthorized', 'the ID token is not a signed JWT (three base64url parts: header, claims, signature)', audit);
  }
  audit.iss = claimText(unverified.iss);
  audit.sub = claimText(unverified.sub);
  audit.jti = claimText(unverified.jti);
  const carried = KEY_CARRYING_HEADERS.find((name) => header[name] !== undefined);
  if (carried) throw refuse('unauthorized', `the ID token's header carries "${carried}": keys come only from the issuer, never from the token`, audit);
  if (typeof header.alg !== 'string' || !ID_TOKEN_ALGORITHMS.includes(header.alg)) {
    throw refuse('unauthorized', `the ID token's algorithm ${JSON.stringify(header.alg ?? null)} is not accepted: ${ID_TOKEN_ALGORITHMS.join(', ')} only`, audit);
  }
  const issuer = audit.iss;
  if (issuer === undefined || !(await issuerKnown(services.db, issuer))) {
    throw refuse('unauthorized', `the ID token's issuer ${JSON.stringify(issuer ?? null)} is not the issuer of any trusted publisher`, audit);
  }
  const candidates = (await publishersOfIssuer(services.db, issuer)).filter((p) => request.projectName === undefined || p.projectName === request.projectName);
  if (candidates.length === 0) {
    throw refuse('forbidden', `project "${request.projectName}" has no trusted publisher of the issuer ${issuer}`, audit);
  }

  // The signature, with the publishers' own key sets when they give them, else the issuer's discovered ones.
  const inline = candidates.filter((p) => p.jwks).map((p) => p.jwks as JSONWebKeySet);
  const nowMs = services.now().getTime();
  let lookup: { keys: KeyLookup; kids: Set<string> };
  try {
    lookup = inline.length > 0 ? localKeys(inline) : await issuerKeys(keyCacheOf(services), issuer, header.kid, services.config.oidc.allowNetworks, nowMs);
  } catch (error) {
    if (error instanceof AppError && error.code === 'unauthorized') throw refuse('unauthorized', error.message, audit);
    if (error instanceof AppError) throw new AppError(error.code, error.message, { ...error.details, audit: { ...audit, reason: error.message } });
    throw error;
  }
  const audiences = [...new Set(candidates.map((p) => p.audience))];
  let claims: JWTPayload;
  try {
    ({ payload: claims } = await jwtVerify(token, lookup.keys, {
      algorithms: ID_TOKEN_ALGORITHMS,
      issuer,
      audience: audiences,
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: new Date(nowMs),
      requiredClaims: ['exp', 'iat', 'sub'],
    }));
  } catch (error) {
    throw refuse('unauthorized', verificationFailure(error, header, issuer, audiences), audit);
  }
  const now = nowMs / 1000;
  const exp = claims.exp!;
  const iat = claims.iat!;
  // jose allowed the skew both ways; exp gets none.
  if (exp <= now) throw refuse('unauthorized', `the ID token has expired (exp ${new Date(exp * 1000).toISOString()})`, audit);
  if (iat > now + CLOCK_SKEW_SECONDS) throw refuse('unauthorized', `the ID token was issued in the future (iat more than ${CLOCK_SKEW_SECONDS} s ahead)`, audit);
  if (exp - iat > ID_TOKEN_MAX_LIFETIME_SECONDS) {
    throw refuse('unauthorized', `the ID token lives ${exp - iat} s (exp - iat): at most ${ID_TOKEN_MAX_LIFETIME_SECONDS} s are accepted`, audit);
  }
  const jti = claimText(claims.jti);
  const needsJti = candidates.find((p) => p.provider === 'github' || p.provider === 'gitlab');
  if (jti === undefined && needsJti) throw refuse('unauthorized', `the ID token carries no jti, which ${needsJti.provider} ID tokens always have`, audit);
  // Jenkins' tokens carry no jti: its signature names it instead.
  const usedKey = createHash('sha256')
    .update(jti !== undefined ? `${issuer}\0jti\0${jti}` : `${issuer}\0sig\0${token.slice(token.lastIndexOf('.') + 1)}`)
    .digest('hex');

  // The publishers.
  const tokenAudiences = Array.isArray(claims.aud) ? claims.aud.map(String) : [String(claims.aud)];
  const misses: Mismatch[] = [];
  const matching: StoredPublisher[] = [];
  for (const publisher of candidates) {
    const differ = differences(publisher, claims, tokenAudiences);
    if (differ.length === 0) matching.push(publisher);
    else misses.push({ publisher, differences: differ });
  }
  if (matching.length === 0) {
    const closest = misses.sort((a, b) => a.differences.length - b.differences.length)[0]!;
    audit.publisherId = closest.publisher.id;
    throw refuse(
      'forbidden',
      `no trusted publisher ${request.projectName === undefined ? '' : `of project "${request.projectName}" `}matches the ID token; the closest, ${closest.publisher.id} of project "${closest.publisher.projectName}", differs in ${closest.differences.join('; ')}`,
      audit,
    );
  }
  const projects = [...new Set(matching.map((p) => p.projectName))].sort();
  if (projects.length > 1) {
    throw refuse('conflict', `trusted publishers of several projects match the ID token (${projects.map((p) => `"${p}"`).join(', ')}): name one in "projectName"`, audit);
  }
  // Several of one project: the oldest.
  const publisher = matching[0]!;
  audit.publisherId = publisher.id;
  const { ref, branch } = refOf(publisher.provider, claims, publisher.refClaim);
  const verifiedAt = new Date(nowMs);
  const provenance = provenanceOf(publisher, claims, ref, verifiedAt);

  // The ID token is used once, and the project token made, together.
  const userId = await pipelineUser(services, publisher.projectName);
  const projectToken = newProjectToken();
  const id = randomUUID();
  const expiresAt = new Date(nowMs + services.config.oidc.tokenMinutes * 60_000);
  await retryConflicts(() =>
    services.db.transaction(async (trx) => {
      if (!(await markUsed(trx, usedKey, new Date(exp * 1000)))) {
        throw refuse('unauthorized', 'the ID token was exchanged already: each ID token is accepted once', audit);
      }
      await insertToken(trx, {
        id,
        userId,
        name: `oidc:${id}`,
        scope: 'publish',
        tokenHash: hashProjectToken(projectToken),
        createdAt: verifiedAt,
        expiresAt,
        oidc: { branch: branch ?? null, publisherId: publisher.id, repositoryUrl: repositoryUrlOf(publisher, claims), provenance: JSON.stringify(provenance) },
      });
    }),
  );
  // Housekeeping: what has expired is refused by its expiry anyway.
  await forgetExpired(services.db, verifiedAt);
  await deleteExpiredOidcTokens(services.db, userId, new Date(nowMs - EXPIRED_TOKENS_KEPT_MS));
  return {
    answer: {
      token: projectToken,
      tokenId: id,
      expiresAt: formatTimestamp(expiresAt),
      projectName: publisher.projectName,
      branch: branch ?? null,
      scopes: publisher.environments && publisher.environments.length > 0 ? [...EXCHANGED_SCOPES] : ['publish'],
      publisherId: publisher.id,
    },
    audit: { ...audit, reason: undefined },
  };
}
