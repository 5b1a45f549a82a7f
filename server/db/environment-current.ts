// The environment_current table: the version current in each environment, per project, group and
// artifact. Written only by a promotion (./promotions.ts), under the lock of its key; read by the
// environments' list, the latest lookup by environment, the search filter, and the deletes and
// retention runs that must spare a record current somewhere (the index on uid).
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { Db } from './dialects/index.js';
import { toDate } from './rows.js';
import { cachedRows } from './statements.js';
import { type ShapedQuery, COLUMNS as VERSION_COLUMNS, type StoredVersion, fromRow as versionFromRow } from './versions.js';

/** What a promotion is keyed by: one current version per key and environment. */
export interface ArtifactKey {
  projectName: string;
  groupId: string;
  artifactId: string;
}

export interface StoredPromoter {
  userId: string | null;
  username: string | null;
  tokenId: string | null;
}

export interface CurrentRow extends ArtifactKey {
  environment: string;
  uid: string;
  version: string;
  promotionId: string;
  promotedAt: Date;
  promotedBy: StoredPromoter;
}

/** A current version with its record, as the environments' list shows it. */
export interface CurrentRecord extends CurrentRow {
  record: StoredVersion;
}

const COLUMNS = [
  'project_name',
  'environment',
  'group_id',
  'artifact_id',
  'uid',
  'version',
  'promotion_id',
  'promoted_at',
  'promoted_by_user_id',
  'promoted_by_username',
  'promoted_by_token_id',
];

export function promoterOf(row: Record<string, unknown>): StoredPromoter {
  return {
    userId: (row.promoted_by_user_id as string | null) ?? null,
    username: (row.promoted_by_username as string | null) ?? null,
    tokenId: (row.promoted_by_token_id as string | null) ?? null,
  };
}

function fromRow(row: Record<string, unknown>): CurrentRow {
  return {
    projectName: String(row.project_name),
    environment: String(row.environment),
    groupId: String(row.group_id),
    artifactId: String(row.artifact_id),
    uid: String(row.uid),
    version: String(row.version),
    promotionId: String(row.promotion_id),
    promotedAt: toDate(row.promoted_at),
    promotedBy: promoterOf(row),
  };
}

const keyWhere = (key: ArtifactKey, environment: string) => ({
  project_name: key.projectName,
  environment,
  group_id: key.groupId,
  artifact_id: key.artifactId,
});

/**
 * The key's current version in the environment, read with a lock (the latest committed row, on
 * MariaDB's repeatable read too): the promotion that holds the key's lock reads it.
 */
export async function lockCurrent(trx: Knex.Transaction, key: ArtifactKey, environment: string): Promise<CurrentRow | undefined> {
  const row = await trx('environment_current').select(COLUMNS).where(keyWhere(key, environment)).forUpdate().first();
  return row ? fromRow(row) : undefined;
}

/** Makes `current` the key's current version in its environment. */
export async function writeCurrent(trx: Knex.Transaction, current: CurrentRow): Promise<void> {
  const row = {
    ...keyWhere(current, current.environment),
    uid: current.uid,
    version: current.version,
    promotion_id: current.promotionId,
    promoted_at: current.promotedAt,
    promoted_by_user_id: current.promotedBy.userId,
    promoted_by_username: current.promotedBy.username,
    promoted_by_token_id: current.promotedBy.tokenId,
  };
  await trx('environment_current')
    .insert(row)
    .onConflict(['project_name', 'environment', 'group_id', 'artifact_id'])
    .merge(['uid', 'version', 'promotion_id', 'promoted_at', 'promoted_by_user_id', 'promoted_by_username', 'promoted_by_token_id']);
}

/** Every current version of the project's environments, with its record: by group, then artifact. */
export async function currentOfProject(db: Db, projectName: string): Promise<CurrentRecord[]> {
  const rows = await db('environment_current as c')
    .join('versions as v', 'v.uid', 'c.uid')
    .select([...COLUMNS.map((column) => `c.${column}`), ...VERSION_COLUMNS.filter((column) => !COLUMNS.includes(column)).map((column) => `v.${column}`), 'v.project_name as record_project', 'v.version as record_version'])
    .where('c.project_name', projectName)
    .orderBy(['c.group_id', 'c.artifact_id']);
  return rows.map((row: Record<string, unknown>) => ({ ...fromRow(row), record: versionFromRow({ ...row, project_name: row.record_project, version: row.record_version }) }));
}

/** What the latest lookup by environment asks for. */
export interface CurrentKey {
  groupId: string;
  artifactId: string;
  branch?: string;
  projectName?: string;
  environment: string;
}

/**
 * The latest lookup by environment: the record current there for this artifact (of this project, on
 * this branch, when given), the most recently promoted where several projects have one. Through the
 * index environment_current_artifact, then the record by its uid.
 */
export function currentQuery(key: CurrentKey): ShapedQuery {
  const conditions = ['c.environment = ?', 'c.group_id = ?', 'c.artifact_id = ?'];
  const values: unknown[] = [key.environment, key.groupId, key.artifactId];
  if (key.projectName !== undefined) {
    conditions.push('c.project_name = ?');
    values.push(key.projectName);
  }
  if (key.branch !== undefined) {
    conditions.push('v.branch = ?');
    values.push(key.branch);
  }
  return {
    shape: `current:${key.projectName !== undefined}:${key.branch !== undefined}`,
    values,
    build: () =>
      `select ${VERSION_COLUMNS.map((column) => `v.${column}`).join(', ')} from environment_current c join versions v on v.uid = c.uid where ${conditions.join(' and ')} order by c.promoted_at desc limit 1`,
  };
}

export async function findCurrentRecord(db: Db, key: CurrentKey): Promise<StoredVersion> {
  const query = currentQuery(key);
  const [row] = await cachedRows(db, query.shape, query.values, query.build);
  if (!row) {
    const scope = [key.branch && `branch ${key.branch}`, key.projectName && `project ${key.projectName}`].filter(Boolean);
    throw new AppError('not_found', `no version of ${key.groupId}:${key.artifactId} is current in ${key.environment}${scope.length ? ` on ${scope.join(', ')}` : ''}`);
  }
  return versionFromRow(row);
}

/**
 * The environments where each of these records is current, read with a lock inside the caller's
 * transaction: a promotion committed while the caller waited for its records' locks is seen (the
 * latest committed rows, on every kind).
 */
export async function environmentsOfRecords(trx: Knex.Transaction, uids: string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  if (uids.length === 0) return found;
  const rows = await trx('environment_current').select('uid', 'environment').whereIn('uid', uids).orderBy('environment').forShare();
  for (const row of rows as { uid: string; environment: string }[]) found.set(row.uid, [...(found.get(row.uid) ?? []), row.environment]);
  return found;
}

/** The record is current nowhere any more (its forced delete). */
export async function clearRecord(trx: Knex.Transaction, uid: string): Promise<void> {
  await trx('environment_current').where({ uid }).delete();
}

/** The project's environments that are gone have no current versions. */
export async function clearEnvironments(trx: Knex.Transaction, projectName: string, environments: string[]): Promise<void> {
  if (environments.length > 0) await trx('environment_current').where({ project_name: projectName }).whereIn('environment', environments).delete();
}
