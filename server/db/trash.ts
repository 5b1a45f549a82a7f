// Deleting and restoring version records: a deleted record moves from `versions` to
// `versions_trash` in one transaction, and the trash is emptied after some days.
//
// Both moves are a real DELETE and INSERT on `versions` inside one transaction that holds the lock
// publishes of the record's key take (dialects: transactionWithKeyLock), so the summary counts (a
// trigger) follow, and a reader sees the record and its key's latest flag either before or after,
// never in between: at no moment two latest records of a key, nor none while the key has records.
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import { type Db, dialectOf } from './dialects/index.js';
import { clearRecord, environmentsOfRecords } from './environment-current.js';
import { markVersionChange } from './events.js';
import { type KeptContent, findKept, keepContent } from './immutable-versions.js';
import { retryConflicts } from './faults.js';
import { toDate, toNumber } from './rows.js';
import { RECORD_COLUMNS, type StoredVersion, fromRow, moveToTrash, publishKey } from './versions.js';

/** A record in the trash: the record, when it was deleted and by whom. */
export interface StoredTrashedVersion extends StoredVersion {
  deletedAt: Date;
  deletedBy: string;
}

const KEY_COLUMNS = ['project_name', 'branch', 'group_id', 'artifact_id'] as const;

function fromTrashRow(row: Record<string, unknown>): StoredTrashedVersion {
  return { ...fromRow(row), deletedAt: toDate(row.deleted_at), deletedBy: String(row.deleted_by) };
}

const keyOf = (row: Record<string, unknown>) => Object.fromEntries(KEY_COLUMNS.map((c) => [c, row[c]]));

/** What a delete needs to know of the record before it is moved. */
export interface DeleteCheck {
  /** Whether a key's latest record may go (its key's highest remaining version becomes latest). */
  force: boolean;
  /** Called with the record as stored, inside the transaction: throws to refuse (permissions, immutability). */
  allow(record: StoredVersion): void;
  /** Whether the record's version is immutable: its content is then kept after it goes (./immutable-versions.ts). */
  immutable(record: StoredVersion): boolean;
  /** Whose deletion it is: a user name, or `retention:<policy>`. */
  deletedBy: string;
  now: Date;
}

/** The outcome of a delete: the record as it was, and the key's new latest version when it moved. */
export interface Deleted {
  record: StoredVersion;
  /** Set when the deleted record was its key's latest: the version that is latest now, or null. */
  latestMovedTo?: string | null;
}

/**
 * Moves the record of this uid to the trash. Not found when it is not (or no longer) in `versions`:
 * of many deletes of one record at once, one moves it and the others find nothing. A key's latest
 * record is refused (conflict) unless `force`; then the key's highest remaining record by version
 * order becomes the latest in the same transaction.
 */
export async function deleteVersion(db: Knex, uid: string, check: DeleteCheck): Promise<Deleted> {
  const found = await db('versions').select(KEY_COLUMNS).where({ uid }).first();
  if (!found) throw new AppError('not_found', `no version record with uid ${uid}`);
  const lock = publishKey(fromRow({ ...found, version: '' })).lock;
  return retryConflicts(() =>
    dialectOf(db).transactionWithKeyLock(db, lock, async (trx) => {
      const row = await trx('versions').select([...RECORD_COLUMNS, 'id']).where({ uid }).forUpdate().first();
      if (!row) throw new AppError('not_found', `no version record with uid ${uid}`);
      const record = fromRow(row);
      check.allow(record);
      // A promotion of this record holds its row's lock: the environments read now are the latest.
      const environments = (await environmentsOfRecords(trx, [uid])).get(uid);
      if (environments) {
        if (!check.force) {
          throw new AppError(
            'conflict',
            `${describe(record)} is the current version in ${environments.join(', ')}: delete it with force=true, and it is current there no more`,
            { reason: 'current_in_environment' },
          );
        }
        await clearRecord(trx, uid);
      }
      if (record.latestVersion && !check.force) {
        throw new AppError(
          'conflict',
          `${describe(record)} is the latest of its key: delete it with force=true, and the highest remaining version becomes the latest`,
          { reason: 'latest_record' },
        );
      }
      if (check.immutable(record)) await keepContent(trx, row, check.now);
      if (!record.latestVersion) {
        await moveToTrash(trx, [row], check.deletedBy, check.now);
        return { record };
      }
      // With a record left to take the flag, the delete and the promotion are one latest move (one
      // latest.moved from this version to the next, migration 20261125100000_events); with none,
      // the delete alone moves the key's latest to null.
      const another = await trx('versions').select('id').where(keyOf(row)).whereNot({ id: row.id }).first();
      if (!another) {
        await moveToTrash(trx, [row], check.deletedBy, check.now);
        return { record, latestMovedTo: null };
      }
      await markVersionChange(trx, 'latest');
      try {
        await moveToTrash(trx, [row], check.deletedBy, check.now);
        return { record, latestMovedTo: await promoteHighest(trx, row) };
      } finally {
        await markVersionChange(trx, null);
      }
    }),
  );
}

/** Makes the key's highest remaining record (version order) its latest: its version, or null when none remain. */
async function promoteHighest(trx: Knex.Transaction, key: Record<string, unknown>): Promise<string | null> {
  const highest = await trx('versions')
    .select('id', 'version')
    .where(keyOf(key))
    .orderBy('version_key', 'desc')
    .orderBy('id', 'desc')
    .first();
  if (!highest) return null;
  await trx('versions').where({ id: highest.id }).update({ latest_version: true, updated_at: trx.fn.now(3) });
  return String(highest.version);
}

const describe = (r: StoredVersion) => `${r.projectName} ${r.branch} ${r.groupId}:${r.artifactId}:${r.version}`;

/** The outcome of a restore: the record as it is stored again, and whether it took its key's latest flag back. */
export interface Restored {
  record: StoredVersion;
  /** Set when the restored record became latest again: the version that was latest before, or null. */
  latestMovedFrom?: string | null;
}

/**
 * Puts a record of the trash back into `versions` under its uid. Conflict when its coordinates were
 * published again meanwhile. A record that was its key's latest is latest again when no record of
 * the key now is, or the key's latest is lower by version order; else it comes back as not latest.
 * `allow` gets the record and the content its coordinates keep (an immutable version's), inside the
 * transaction: it throws to refuse.
 */
export async function restoreVersion(db: Knex, uid: string, allow: (record: StoredVersion, kept: KeptContent | undefined) => void): Promise<Restored> {
  const found = await db('versions_trash').select(KEY_COLUMNS).where({ uid }).first();
  if (!found) throw new AppError('not_found', `no record with uid ${uid} in the trash`);
  const lock = publishKey(fromRow({ ...found, version: '' })).lock;
  return retryConflicts(() =>
    dialectOf(db).transactionWithKeyLock(db, lock, async (trx) => {
      const row = await trx('versions_trash').select([...RECORD_COLUMNS, 'id', 'deleted_at', 'deleted_by']).where({ uid }).forUpdate().first();
      if (!row) throw new AppError('not_found', `no record with uid ${uid} in the trash`);
      const record = fromRow(row);
      allow(record, await findKept(trx, record));
      const taken = await trx('versions').select('uid').where({ ...keyOf(row), version: row.version }).first();
      if (taken) {
        throw new AppError('conflict', `${describe(record)} was published again since it was deleted (uid ${String(taken.uid)}): it cannot be restored`);
      }
      const current = await trx('versions').select('version', 'version_key').where({ ...keyOf(row), latest_version: true }).first();
      const takesLatest = record.latestVersion && (!current || String(current.version_key) < String(row.version_key));
      // The flag taken from the current latest is the first half of one move to the restored record
      // (the dialect's clearLatest marks it so), and the insert is a restore, not a publish
      // (migration 20261125100000_events).
      try {
        if (current && takesLatest) await dialectOf(trx).clearLatest(trx, publishKey(record));
        await markVersionChange(trx, 'restore');
        const copy = Object.fromEntries(RECORD_COLUMNS.map((c) => [c, row[c]]));
        await trx('versions').insert({ ...copy, latest_version: takesLatest, updated_at: trx.fn.now(3) });
      } finally {
        await markVersionChange(trx, null);
      }
      await trx('versions_trash').where({ id: row.id }).delete();
      const restored = { ...record, latestVersion: takesLatest };
      return takesLatest ? { record: restored, latestMovedFrom: current ? String(current.version) : null } : { record: restored };
    }),
  );
}

/** One page of the trash, newest deletion first; only `projectName`'s records when given. */
export async function listTrash(
  db: Db,
  filter: { projectName?: string },
  paging: { page: number; size: number },
): Promise<{ items: StoredTrashedVersion[]; total: number }> {
  const base = () => {
    const query = db('versions_trash');
    if (filter.projectName !== undefined) query.where('project_name', filter.projectName);
    return query;
  };
  const [rows, count] = await Promise.all([
    base()
      .select([...RECORD_COLUMNS, 'deleted_at', 'deleted_by'])
      .orderBy('deleted_at', 'desc')
      .orderBy('id', 'desc')
      .limit(paging.size)
      .offset((paging.page - 1) * paging.size),
    base().count({ n: '*' }).first(),
  ]);
  return { items: rows.map(fromTrashRow), total: toNumber(count?.n) };
}

/** The record of this uid in the trash. */
export async function findTrashed(db: Db, uid: string): Promise<StoredTrashedVersion> {
  const row = await db('versions_trash').select([...RECORD_COLUMNS, 'deleted_at', 'deleted_by']).where({ uid }).first();
  if (!row) throw new AppError('not_found', `no record with uid ${uid} in the trash`);
  return fromTrashRow(row);
}

/** How many records one statement of emptyTrash removes, so no statement runs long. */
const EMPTY_BATCH = 5_000;

/**
 * Removes for good the records deleted more than `days` days before `now`; how many. A plain
 * function of the database and the time, for whichever scheduler runs it.
 */
export async function emptyTrash(db: Knex, now: Date, days: number): Promise<number> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  let removed = 0;
  for (;;) {
    const ids = (await db('versions_trash').select('id').where('deleted_at', '<', cutoff).orderBy('id').limit(EMPTY_BATCH)).map((r) => r.id);
    if (ids.length === 0) return removed;
    await db('versions_trash').whereIn('id', ids).delete();
    removed += ids.length;
  }
}
