// Publishing and finding version records, and their shape in an answer.
import { formatCreationDate } from '../../common/dates.js';
import { AppError } from '../../common/errors.js';
import { withoutUserInfo } from '../../common/urls.js';
import {
  DEFAULT_TYPE,
  type LatestQuery,
  type Paging,
  type PublishResult,
  type SearchFilters,
  type SearchResult,
  type VersionInformation,
  type VersionRecord,
} from '../../common/schemas/repositories.js';
import { type PublishCheck, dialectOf } from '../db/dialects/index.js';
import {
  type StoredVersion,
  type VersionFields,
  findByUid,
  findLatest,
  searchVersions,
  upsertCheckedVersion,
  upsertVersion,
} from '../db/versions.js';
import { type SignedCredential, checkActor } from './access.js';
import { actorFromSession } from './auth.js';
import { checkImmutable, isImmutable } from './immutable.js';
import { LAST_USED_RESOLUTION_MS, actorFromProjectTokenHash } from './tokens.js';
import type { Actor, Services } from './context.js';

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
  };
}

/**
 * Publishes a record with a credential whose signature was checked: in one statement that also
 * checks what the database knows of the credential where the kind can; otherwise, or when that
 * check fails, the credential is resolved to its user, which says what is wrong with it.
 */
export async function publish(services: Services, credential: SignedCredential, record: VersionRecord): Promise<PublishResult> {
  const checked = publishesChecked(services) ? await publishChecked(services, credential, record) : undefined;
  if (checked) return checked;
  const actor =
    credential.kind === 'session' ? await actorFromSession(services, credential) : await actorFromProjectTokenHash(services, credential.tokenHash);
  checkActor(actor, { scope: 'publish' });
  return publishAs(services, actor, record);
}

async function publishAs(services: Services, actor: Actor, record: VersionRecord): Promise<PublishResult> {
  if (actor.role !== 'ROLE_ADMIN' && actor.projectName !== record.projectName) {
    throw new AppError(
      'forbidden',
      `user ${actor.username} may publish only to project "${actor.projectName ?? ''}", not "${record.projectName}"`,
    );
  }
  const fields = await checkImmutable(services, services.db, storedFields(services, record), record.creationDate !== undefined);
  const { uid, created } = await upsertVersion(services.db, fields);
  return { _status: true, uid, created };
}

/** Whether this database kind checks a publish's credential in the publish statement (publishChecked). */
export function publishesChecked(services: Services): boolean {
  return dialectOf(services.db).publishCheckedVersionRow !== undefined;
}

/**
 * Publishes in one statement that also checks what the database knows of the credential, by the
 * same rules as resolving it to an actor and calling `publish` (one round trip instead of two).
 * Undefined, with nothing written, when the check fails (or the database kind cannot make it): the
 * caller then takes the usual way, which says why, or records a project token's use that is due.
 */
export async function publishChecked(services: Services, credential: SignedCredential, record: VersionRecord): Promise<PublishResult | undefined> {
  const projectName = record.projectName;
  const now = services.now();
  const check: PublishCheck =
    credential.kind === 'session'
      ? { ...credential, projectName }
      : { ...credential, projectName, now, usedSince: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) };
  // An immutable version is checked on the usual way, after the credential (the caller takes it).
  if (isImmutable(services, record.artifact.version)) return undefined;
  const stored = await upsertCheckedVersion(services.db, storedFields(services, record), check);
  return stored && { _status: true, uid: stored.uid, created: stored.created };
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

export async function search(services: Services, filters: SearchFilters, paging: Paging): Promise<SearchResult> {
  const { items, total } = await searchVersions(services.db, filters, paging);
  return {
    versionInformation: items.map(toVersionInformation),
    page: {
      totalElements: total,
      totalPages: Math.ceil(total / paging.size),
      currentPage: paging.page,
      numberOfElements: items.length,
    },
  };
}

export async function latest(services: Services, key: LatestQuery): Promise<VersionInformation> {
  return toVersionInformation(await findLatest(services.db, key));
}

export async function byUid(services: Services, uid: string): Promise<VersionInformation> {
  return toVersionInformation(await findByUid(services.db, uid));
}
