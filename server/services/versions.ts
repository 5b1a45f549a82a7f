// Publishing and finding version records.
import { AppError } from '../../common/errors.js';
import { parseCreationDate } from '../../common/dates.js';
import { withoutUserInfo } from '../../common/urls.js';
import {
  DEFAULT_TYPE,
  type Paging,
  type PublishResult,
  type SearchFilters,
  type SearchResult,
  type VersionRecord,
} from '../../common/schemas/repositories.js';
import { searchVersions, upsertVersion } from '../db/versions.js';
import type { Actor, Services } from './context.js';


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
    creationDate: record.creationDate ? parseCreationDate(record.creationDate)! : services.now(),
    type: record.type ?? DEFAULT_TYPE,
    latestVersion: record.latestVersion ?? false,
    description: record.description ?? null,
  });
  return { _status: true, uid, created };
}

export async function search(services: Services, filters: SearchFilters, paging: Paging): Promise<SearchResult> {
  const { items, total } = await searchVersions(services.db, filters, paging);
  return {
    versionInformation: items,
    page: {
      totalElements: total,
      totalPages: Math.ceil(total / paging.size),
      currentPage: paging.page,
      numberOfElements: items.length,
    },
  };
}
