// Deleting records, the trash and restoring from it (docs/retention.md). Who may (administrators any
// record, a ROLE_USER or its project token of the scope `delete` its own project's) is the endpoints'
// access rule, decided before these run (server/policy/access.ts).
import { pageInfo } from '../../common/schemas/common.js';
import { AppError } from '../../common/errors.js';
import type { TrashPage, TrashQuery, TrashedVersion } from '../../common/schemas/trash.js';
import type { VersionInformation } from '../../common/schemas/repositories.js';
import { type StoredTrashedVersion, deleteVersion, findTrashed, listTrash, restoreVersion } from '../db/trash.js';
import type { Actor, Services } from './context.js';
import { checkRestore, isImmutable } from './immutable.js';
import { toVersionInformation } from './versions.js';

/**
 * Moves a record to the trash. A key's latest record, and a record of an immutable version, need
 * `force`; the key's highest remaining version then becomes its latest. An immutable version's
 * content is kept, so that it never comes back with other content (services/immutable.ts).
 */
export async function deleteRecord(services: Services, actor: Actor, uid: string, force: boolean): Promise<{ record: VersionInformation; latestMovedTo?: string | null }> {
  const deleted = await deleteVersion(services.db, uid, {
    force,
    deletedBy: actor.username,
    now: services.now(),
    allow: (record) => {
      if (isImmutable(services, record.version) && !force) {
        throw new AppError('conflict', `version ${record.version} is immutable on this server: delete it with force=true`, { reason: 'immutable_version' });
      }
    },
    immutable: (record) => isImmutable(services, record.version),
  });
  services.log.info({ uid, by: actor.username, latestMovedTo: deleted.latestMovedTo }, 'version record deleted');
  return { record: toVersionInformation(deleted.record), latestMovedTo: deleted.latestMovedTo };
}

/** The record of a uid in the trash, as the restore's access rule judges it (its project). */
export function trashedRecordOf(services: Services, uid: string): Promise<StoredTrashedVersion> {
  return findTrashed(services.db, uid);
}

export async function restoreRecord(services: Services, actor: Actor, uid: string): Promise<VersionInformation> {
  const restored = await restoreVersion(services.db, uid, (record, kept) => checkRestore(services, record, kept));
  services.log.info({ uid, by: actor.username, latestMovedFrom: restored.latestMovedFrom }, 'version record restored');
  return toVersionInformation(restored.record);
}

function toTrashedAnswer(services: Services, trashed: StoredTrashedVersion): TrashedVersion {
  return {
    ...toVersionInformation(trashed),
    deletedAt: trashed.deletedAt.toISOString(),
    deletedBy: trashed.deletedBy,
    purgeAfter: new Date(trashed.deletedAt.getTime() + services.config.trashDays * 86_400_000).toISOString(),
  };
}

/** A page of the trash of `projectName` (undefined: every project's). */
export async function trashPage(services: Services, projectName: string | undefined, query: TrashQuery): Promise<TrashPage> {
  const { items, total } = await listTrash(services.db, { projectName }, query);
  return {
    records: items.map((item) => toTrashedAnswer(services, item)),
    page: pageInfo(total, query, items.length),
  };
}
