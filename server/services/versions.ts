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
import { type StoredVersion, findByUid, findLatest, searchVersions, upsertVersion } from '../db/versions.js';
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

export async function publish(services: Services, actor: Actor, record: VersionRecord): Promise<PublishResult> {
  if (actor.role !== 'ROLE_ADMIN' && actor.projectName !== record.projectName) {
    throw new AppError(
      'forbidden',
      `user ${actor.username} may publish only to project "${actor.projectName ?? ''}", not "${record.projectName}"`,
    );
  }
  const { uid, created } = await upsertVersion(services.db, {
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
  });
  return { _status: true, uid, created };
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
