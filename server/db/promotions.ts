// The promotions table: every promotion of a record into an environment, in commit order (`seq`),
// and the promotion itself: the history entry, the key's current version and the event, written
// together under the lock of the key and environment.
//
// Promotions of one key (project, group, artifact) into one environment take turns on every kind
// and across instances: each runs in a transaction that holds the database's lock of that key
// (dialects: transactionWithKeyLock; PostgreSQL's advisory lock, MariaDB's named lock), reads the
// current version with a lock, and writes the history entry and the new current version before it
// commits. So the entries of a key and environment are in commit order, and each one's previous
// version is the one before it. The record promoted is locked too (dialects: lockRowsKeepingKeys),
// so that a delete, a retention run or a veto of it waits for the promotion, or the promotion for
// them, and then sees what they did.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import { compareVersions } from '../../common/version-key.js';
import { type Db, dialectOf } from './dialects/index.js';
import { type ArtifactKey, type CurrentRow, type StoredPromoter, lockCurrent, promoterOf, writeCurrent } from './environment-current.js';
import { appendEvent } from './events.js';
import { retryConflicts } from './faults.js';
import { toDate, toNumber } from './rows.js';
import { COLUMNS as VERSION_COLUMNS, type StoredVersion, fromRow as versionFromRow } from './versions.js';

export interface StoredPromotion extends ArtifactKey {
  id: string;
  uid: string;
  environment: string;
  branch: string;
  version: string;
  previousUid: string | null;
  previousVersion: string | null;
  rollback: boolean;
  promotedAt: Date;
  promotedBy: StoredPromoter;
  comment: string | null;
}

const COLUMNS = [
  'id',
  'uid',
  'project_name',
  'environment',
  'group_id',
  'artifact_id',
  'branch',
  'version',
  'previous_uid',
  'previous_version',
  'rollback',
  'promoted_at',
  'promoted_by_user_id',
  'promoted_by_username',
  'promoted_by_token_id',
  'comment',
];

function fromRow(row: Record<string, unknown>): StoredPromotion {
  return {
    id: String(row.id),
    uid: String(row.uid),
    projectName: String(row.project_name),
    environment: String(row.environment),
    groupId: String(row.group_id),
    artifactId: String(row.artifact_id),
    branch: String(row.branch),
    version: String(row.version),
    previousUid: (row.previous_uid as string | null) ?? null,
    previousVersion: (row.previous_version as string | null) ?? null,
    rollback: Boolean(row.rollback),
    promotedAt: toDate(row.promoted_at),
    promotedBy: promoterOf(row),
    comment: (row.comment as string | null) ?? null,
  };
}

function toRow(p: StoredPromotion): Record<string, unknown> {
  return {
    id: p.id,
    uid: p.uid,
    project_name: p.projectName,
    environment: p.environment,
    group_id: p.groupId,
    artifact_id: p.artifactId,
    branch: p.branch,
    version: p.version,
    previous_uid: p.previousUid,
    previous_version: p.previousVersion,
    rollback: p.rollback,
    promoted_at: p.promotedAt,
    promoted_by_user_id: p.promotedBy.userId,
    promoted_by_username: p.promotedBy.username,
    promoted_by_token_id: p.promotedBy.tokenId,
    comment: p.comment,
  };
}

/** When the record was first promoted into the environment; undefined when it never was. */
export async function firstPromotedAt(db: Db, uid: string, environment: string): Promise<Date | undefined> {
  const row = await db('promotions').min({ at: 'promoted_at' }).where({ uid, environment }).first();
  return row?.at === null || row?.at === undefined ? undefined : toDate(row.at);
}

export interface PromotionFilter {
  projectName?: string;
  groupId?: string;
  artifactId?: string;
  environment?: string;
}

/** A page of the history, newest first (commit order), and how many entries match. */
export async function listPromotions(db: Db, filter: PromotionFilter, paging: { page: number; size: number }): Promise<{ items: StoredPromotion[]; total: number }> {
  const where: Record<string, string> = {};
  if (filter.projectName !== undefined) where.project_name = filter.projectName;
  if (filter.groupId !== undefined) where.group_id = filter.groupId;
  if (filter.artifactId !== undefined) where.artifact_id = filter.artifactId;
  if (filter.environment !== undefined) where.environment = filter.environment;
  const [rows, counted] = await Promise.all([
    db('promotions').select(COLUMNS).where(where).orderBy('seq', 'desc').limit(paging.size).offset((paging.page - 1) * paging.size),
    db('promotions').where(where).count({ n: '*' }).first(),
  ]);
  return { items: rows.map(fromRow), total: toNumber(counted?.n) };
}

/** What a promotion is asked to do. */
export interface PromotionOrder {
  uid: string;
  /** The record's artifact, as read before (a record's coordinates never change): whose lock to take. */
  key: ArtifactKey;
  environment: string;
  by: StoredPromoter;
  comment: string | null;
  now: Date;
  /**
   * The gates, called inside the transaction with the record as it is now (locked): throws to
   * refuse. Not called when the record is current there already.
   */
  check(trx: Knex.Transaction, record: StoredVersion): Promise<void>;
  /** The event's data beside the record, environment, previous uid and rollback flag. */
  eventBy: Record<string, unknown>;
}

/** A promotion's outcome: `created` false when the record was current there already (nothing written). */
export interface Promoted {
  promotion: StoredPromotion;
  record: StoredVersion;
  created: boolean;
}

/** Promotes the record of `order.uid` into its environment, in turn with the other promotions of its key there. */
export async function promote(db: Knex, order: PromotionOrder): Promise<Promoted> {
  const lock = JSON.stringify(['promote', order.key.projectName, order.key.groupId, order.key.artifactId, order.environment]);
  const dialect = dialectOf(db);
  return retryConflicts(() =>
    dialect.transactionWithKeyLock(db, lock, async (trx) => {
      const query = trx('versions').select(VERSION_COLUMNS).where({ uid: order.uid });
      dialect.lockRowsKeepingKeys(query);
      const row = (await query.first()) as Record<string, unknown> | undefined;
      if (!row) throw new AppError('not_found', `no version record with uid ${order.uid}`);
      const record = versionFromRow(row);
      const key: ArtifactKey = { projectName: record.projectName, groupId: record.groupId, artifactId: record.artifactId };
      const current = await lockCurrent(trx, key, order.environment);
      if (current?.uid === record.uid) {
        const made = await trx('promotions').select(COLUMNS).where({ id: current.promotionId }).first();
        // The history entry of the promotion that made it current; lost only if rows were removed by hand.
        return { promotion: made ? fromRow(made) : fromCurrent(current, record), record, created: false };
      }
      await order.check(trx, record);
      const promotion: StoredPromotion = {
        id: randomUUID(),
        uid: record.uid,
        ...key,
        environment: order.environment,
        branch: record.branch,
        version: record.version,
        previousUid: current?.uid ?? null,
        previousVersion: current?.version ?? null,
        rollback: current !== undefined && compareVersions(record.version, current.version) < 0,
        promotedAt: order.now,
        promotedBy: order.by,
        comment: order.comment,
      };
      await trx('promotions').insert(toRow(promotion));
      await writeCurrent(trx, { ...key, environment: order.environment, uid: record.uid, version: record.version, promotionId: promotion.id, promotedAt: order.now, promotedBy: order.by });
      await appendEvent(
        trx,
        'version.promoted',
        { record: row, environment: order.environment, previousUid: promotion.previousUid, rollback: promotion.rollback, by: order.eventBy },
        record.projectName,
      );
      return { promotion, record, created: true };
    }),
  );
}

/** A current row as a history entry, where its entry is missing. */
function fromCurrent(current: CurrentRow, record: StoredVersion): StoredPromotion {
  return {
    id: current.promotionId,
    uid: current.uid,
    projectName: current.projectName,
    environment: current.environment,
    groupId: current.groupId,
    artifactId: current.artifactId,
    branch: record.branch,
    version: current.version,
    previousUid: null,
    previousVersion: null,
    rollback: false,
    promotedAt: current.promotedAt,
    promotedBy: current.promotedBy,
    comment: null,
  };
}
