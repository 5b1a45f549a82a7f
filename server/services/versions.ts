// Publishing and finding version records, and their shape in an answer.
import { pageInfo } from '../../common/schemas/common.js';
import { formatCreationDate } from '../../common/dates.js';
import { AppError } from '../../common/errors.js';
import { withoutUserInfo } from '../../common/urls.js';
import { findCurrentRecord } from '../db/environment-current.js';
import {
  DEFAULT_TYPE,
  type LatestQuery,
  type PageRequest,
  type Provenance,
  type PublishResult,
  type SearchFilters,
  type SearchResult,
  type VersionInformation,
  type VersionRecord,
} from '../../common/schemas/repositories.js';
import {
  type StoredVersion,
  type VersionFields,
  findByUid,
  findLatest,
  searchVersions,
  upsertVersion,
} from '../db/versions.js';
import { checkOidcPublish, explainRefusal, oidcPublishPrecondition, publishPrecondition } from '../policy/publish.js';
import type { SignedCredential } from './context.js';
import type { AuditEntry } from '../db/audit.js';
import { checkProvenance, explainImmutable, immutableRule } from './immutable.js';
import type { Services } from './context.js';

/** A stored record as the API answers with it (docs/api.md, "Version records"). */
export function toVersionInformation(stored: StoredVersion): VersionInformation {
  const { groupId, artifactId, version } = stored;
  return {
    uid: stored.uid,
    projectName: stored.projectName,
    branch: stored.branch,
    groupId,
    artifactId,
    version,
    artifact: { groupId, artifactId, version },
    repositoryUrl: stored.repositoryUrl,
    creationDate: formatCreationDate(stored.creationDate),
    type: stored.type,
    latestVersion: stored.latestVersion,
    description: stored.description,
    provenance: stored.provenance ? (JSON.parse(stored.provenance) as Provenance) : null,
    veto: stored.veto ? { reason: stored.veto.reason, by: stored.veto.by, at: stored.veto.at.toISOString() } : null,
  };
}

/**
 * Publishes the record as the credential's user: the record, the publish policy's precondition
 * (server/policy/publish.ts) and, for an immutable version, its rule (services/immutable.ts) go to
 * the database together, so the checks and the write are one step where the kind can, and the
 * immutable rule is checked under the key's lock. With `audit`, the request's audit entry goes with
 * them and is written with the record (server/db/versions.ts, upsertVersion). When the database
 * refuses, the credential is resolved as the auth path resolves it, to throw the same 401 or 403 it
 * would; then the immutable rule says which content differs (409).
 */
export async function publish(services: Services, credential: SignedCredential, record: VersionRecord, audit?: AuditEntry): Promise<PublishResult> {
  let fields = storedFields(services, record);
  const dateGiven = record.creationDate !== undefined;
  const immutable = immutableRule(services, fields, dateGiven);
  // Set once the token turns out to be one made by an ID token exchange.
  let oidcTokenHash: string | undefined;
  // A second refusal that neither the credential nor the version's rule explains: the credential
  // changed twice meanwhile. The refusal that tells a token made by an ID token exchange apart
  // (server/policy/publish.ts) does not count.
  for (let refusals = 0; refusals < 2; ) {
    const now = services.now();
    const precondition = oidcTokenHash ? oidcPublishPrecondition(oidcTokenHash, record.projectName, now) : publishPrecondition(credential, record.projectName, now);
    const stored = await upsertVersion(services.db, fields, precondition, immutable, audit);
    if (stored) return { _status: true, uid: stored.uid, created: stored.created };
    // The credential first (a refused one says why before the version's rule), then the rule.
    const actor = await explainRefusal(services, credential, record.projectName);
    const binding = actor.projectToken?.oidc;
    if (binding && credential.kind === 'project' && !oidcTokenHash) {
      const repositoryUrl = checkOidcPublish(binding, record);
      fields = { ...fields, repositoryUrl: repositoryUrl && withoutUserInfo(repositoryUrl), provenance: binding.provenance };
      await checkProvenance(services, fields);
      oidcTokenHash = credential.tokenHash;
      continue;
    }
    if (immutable) await explainImmutable(services, fields, dateGiven);
    refusals++;
  }
  throw new AppError('unavailable', 'the publishing user or token changed during the publish: try again');
}

/** The fields a published record is stored with (also used by the benchmark). */
export function storedFields(services: Services, record: VersionRecord): VersionFields {
  return {
    projectName: record.projectName,
    branch: record.branch,
    groupId: record.artifact.groupId,
    artifactId: record.artifact.artifactId,
    version: record.artifact.version,
    repositoryUrl: record.repositoryUrl ? withoutUserInfo(record.repositoryUrl) : null,
    creationDate: record.creationDate ?? services.now(),
    type: record.type ?? DEFAULT_TYPE,
    latestVersion: record.latestVersion ?? false,
    description: record.description ?? null,
  };
}

export async function search(services: Services, filters: SearchFilters, paging: PageRequest): Promise<SearchResult> {
  const { items, total } = await searchVersions(services.db, filters, paging);
  return {
    versionInformation: items.map(toVersionInformation),
    page: pageInfo(total, paging, items.length),
  };
}

/** The latest record of an artifact; with `environment`, the one current there instead. */
export async function latest(services: Services, key: LatestQuery): Promise<VersionInformation> {
  if (key.environment !== undefined) return toVersionInformation(await findCurrentRecord(services.db, { ...key, environment: key.environment }));
  return toVersionInformation(await findLatest(services.db, key));
}

/** The stored record of a uid, as the delete's access rule judges it (its project). */
export function recordOf(services: Services, uid: string): Promise<StoredVersion> {
  return findByUid(services.db, uid);
}

export async function byUid(services: Services, uid: string): Promise<VersionInformation> {
  return toVersionInformation(await findByUid(services.db, uid));
}
