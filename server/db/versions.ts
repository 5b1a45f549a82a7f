// The versions table: one record per coordinates, at most one latest per project, artifact, branch.
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { Paging, SearchFilters, SortField } from '../../common/schemas/repositories.js';
import { versionKey } from '../../common/version-key.js';
import { type Db, type PublishCheck, type PublishKey, dialectOf } from './dialects/index.js';
import { retryConflicts } from './faults.js';
import { toDate, toNumber } from './rows.js';
import { cachedRows } from './statements.js';

/** A record as stored, before it is shaped for an answer. */
export interface VersionFields {
  projectName: string;
  branch: string;
  groupId: string;
  artifactId: string;
  version: string;
  repositoryUrl: string | null;
  creationDate: Date;
  type: string;
  latestVersion: boolean;
  description: string | null;
}

/** A stored record: its fields and its uid. The service shapes it for an answer. */
export interface StoredVersion extends VersionFields {
  uid: string;
}

const COLUMNS = [
  'uid',
  'project_name',
  'branch',
  'group_id',
  'artifact_id',
  'version',
  'repository_url',
  'creation_date',
  'type',
  'latest_version',
  'description',
];

const SORT_COLUMNS: Record<SortField, string> = {
  projectName: 'project_name',
  branch: 'branch',
  groupId: 'group_id',
  artifactId: 'artifact_id',
  version: 'version_key',
  creationDate: 'creation_date',
  type: 'type',
  repositoryUrl: 'repository_url',
  latestVersion: 'latest_version',
};

export function fromRow(row: Record<string, unknown>): StoredVersion {
  return {
    uid: String(row.uid),
    projectName: String(row.project_name),
    branch: String(row.branch),
    groupId: String(row.group_id),
    artifactId: String(row.artifact_id),
    version: String(row.version),
    repositoryUrl: (row.repository_url as string | null) ?? null,
    creationDate: toDate(row.creation_date),
    type: String(row.type),
    latestVersion: Boolean(row.latest_version),
    description: (row.description as string | null) ?? null,
  };
}

/** The row of a record, with its version sort key: also used by the benchmark's bulk seeding. */
export function toRow(fields: VersionFields): Record<string, unknown> {
  return {
    project_name: fields.projectName,
    branch: fields.branch,
    group_id: fields.groupId,
    artifact_id: fields.artifactId,
    version: fields.version,
    version_key: versionKey(fields.version),
    repository_url: fields.repositoryUrl,
    creation_date: fields.creationDate,
    type: fields.type,
    latest_version: fields.latestVersion,
    description: fields.description,
  };
}

/** The columns that name a record: publishing the same ones again replaces it. */
export const COORDINATE_COLUMNS = ['project_name', 'branch', 'group_id', 'artifact_id', 'version'];

/** The key a record's publish locks, and the version a latest publish keeps (also used by the benchmark). */
export function publishKey(fields: VersionFields): PublishKey {
  return {
    lock: JSON.stringify([fields.projectName, fields.groupId, fields.artifactId, fields.branch]),
    projectName: fields.projectName,
    groupId: fields.groupId,
    artifactId: fields.artifactId,
    branch: fields.branch,
    version: fields.version,
  };
}

/**
 * Inserts or replaces the record of these coordinates, in turn with the other publishes of its key
 * (they share its latest flag and summary counts). With `latestVersion` it becomes the only latest
 * record of its key in the same transaction (server/db/dialects). A deadlock, serialization failure
 * or lock timeout all the same (the database rolled the work back) is retried.
 */
export function upsertVersion(db: Knex, fields: VersionFields): Promise<{ uid: string; created: boolean }> {
  const row = { ...toRow(fields), updated_at: db.fn.now(3) };
  return retryConflicts(() => dialectOf(db).publishVersionRow(db, row, COORDINATE_COLUMNS, publishKey(fields), fields.latestVersion));
}

/**
 * As upsertVersion, in one statement with the check of the publish's credential (PublishCheck),
 * where the dialect can. Undefined, with nothing written, when the dialect cannot or the check fails.
 */
export async function upsertCheckedVersion(db: Knex, fields: VersionFields, check: PublishCheck): Promise<{ uid: string; created: boolean } | undefined> {
  const dialect = dialectOf(db);
  if (!dialect.publishCheckedVersionRow) return undefined;
  const row = { ...toRow(fields), updated_at: db.fn.now(3) };
  return retryConflicts(() => dialect.publishCheckedVersionRow!(db, row, COORDINATE_COLUMNS, publishKey(fields), fields.latestVersion, check));
}

/**
 * Turns a filter value into a LIKE pattern when it holds a `*` wildcard (`\*` is a literal
 * asterisk), or into an exact value. LIKE's own metacharacters in the value are escaped.
 */
export function filterPattern(value: string): { like: string } | { exact: string } {
  let like = '';
  let exact = '';
  let wildcard = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && value[i + 1] === '*') {
      like += '*';
      exact += '*';
      i++;
    } else if (c === '*') {
      like += '%';
      wildcard = true;
    } else {
      like += c === '%' || c === '_' || c === '\\' ? `\\${c}` : c;
      exact += c;
    }
  }
  return wildcard ? { like } : { exact };
}

const FILTER_COLUMNS: [keyof SearchFilters, string][] = [
  ['projectName', 'project_name'],
  ['branch', 'branch'],
  ['groupId', 'group_id'],
  ['artifactId', 'artifact_id'],
  ['version', 'version'],
  ['type', 'type'],
];

/** Adds the filters on these columns to a query of versions or of version_counts. */
function applyFilters(db: Db, query: Knex.QueryBuilder, filters: SearchFilters, columns: [keyof SearchFilters, string][]): Knex.QueryBuilder {
  const like = `?? like ? ${dialectOf(db).likeEscape}`;
  for (const [field, column] of columns) {
    const value = filters[field];
    if (typeof value !== 'string') continue;
    const pattern = filterPattern(value);
    if ('like' in pattern) query.whereRaw(like, [column, pattern.like]);
    else query.where(column, pattern.exact);
  }
  if (filters.latestVersion === true) query.where('latest_version', true);
  return query;
}

/** The filtered query both the page and its count are built from. */
export function searchQuery(db: Db, filters: SearchFilters): Knex.QueryBuilder {
  const query = applyFilters(db, db('versions'), filters, FILTER_COLUMNS);
  if (filters.uid !== undefined) query.where('uid', filters.uid);
  return query;
}

/** The page query of a search: order, then the default order (newest first) as the tie-breaker. */
export function pageQuery(db: Db, filters: SearchFilters, paging: Paging): Knex.QueryBuilder {
  const query = searchQuery(db, filters).select(COLUMNS);
  if (paging.sortField) {
    query.orderBy(SORT_COLUMNS[paging.sortField], paging.sortDirection === 'DESC' ? 'desc' : 'asc');
  }
  return query
    .orderBy('creation_date', 'desc')
    .orderBy('id', 'desc')
    .limit(paging.size)
    .offset((paging.page - 1) * paging.size);
}

/**
 * The total of a search. Filters on the columns that version_counts keeps are answered from its
 * summary rows (a few, however many records match); only `version` and `uid` need the records.
 */
export function countQuery(db: Db, filters: SearchFilters): Knex.QueryBuilder {
  if (filters.version === undefined && filters.uid === undefined) {
    const counted = FILTER_COLUMNS.filter(([field]) => field !== 'version');
    return applyFilters(db, db('version_counts'), filters, counted).select(db.raw('coalesce(sum(records), 0) as n'));
  }
  return searchQuery(db, filters).count({ n: '*' });
}

/**
 * The shape of a search's filters (which are given, exact or wildcard) and their values in the order
 * applyFilters binds them, for cachedRows.
 */
function filterShape(filters: SearchFilters, columns: [keyof SearchFilters, string][]): { shape: string; values: unknown[] } {
  let shape = '';
  const values: unknown[] = [];
  for (const [field] of columns) {
    const value = filters[field];
    if (typeof value !== 'string') continue;
    const pattern = filterPattern(value);
    shape += 'like' in pattern ? `${field}~` : `${field}=`;
    values.push('like' in pattern ? pattern.like : pattern.exact);
  }
  if (filters.latestVersion === true) {
    shape += 'latest';
    values.push(true);
  }
  return { shape, values };
}

function searchShape(filters: SearchFilters): { shape: string; values: unknown[] } {
  const shaped = filterShape(filters, FILTER_COLUMNS);
  if (filters.uid !== undefined) {
    shaped.shape += ',uid';
    shaped.values.push(filters.uid);
  }
  return shaped;
}

function pageRows(db: Db, filters: SearchFilters, paging: Paging): Promise<Record<string, unknown>[]> {
  const { shape, values } = searchShape(filters);
  const offset = (paging.page - 1) * paging.size;
  values.push(paging.size);
  // knex leaves out `offset 0`.
  if (offset > 0) values.push(offset);
  const order = paging.sortField ? `${paging.sortField} ${paging.sortDirection}` : '';
  return cachedRows(db, `page:${shape}:${order}:${offset > 0}`, values, () => pageQuery(db, filters, paging));
}

async function countOf(db: Db, filters: SearchFilters): Promise<number> {
  const fromCounts = filters.version === undefined && filters.uid === undefined;
  const { shape, values } = fromCounts
    ? filterShape(filters, FILTER_COLUMNS.filter(([field]) => field !== 'version'))
    : searchShape(filters);
  // `.first()` adds `limit 1`.
  values.push(1);
  const rows = await cachedRows(db, `count:${fromCounts}:${shape}`, values, () => countQuery(db, filters).first());
  return toNumber(rows[0]?.n);
}

export async function searchVersions(
  db: Db,
  filters: SearchFilters,
  paging: Paging,
): Promise<{ items: StoredVersion[]; total: number }> {
  const [rows, total] = await Promise.all([pageRows(db, filters, paging), countOf(db, filters)]);
  return { items: rows.map(fromRow), total };
}

/** The latest record of an artifact; the most recently written where several keys match. */
export function latestQuery(
  db: Db,
  key: { groupId: string; artifactId: string; branch?: string; projectName?: string },
): Knex.QueryBuilder {
  const query = db('versions')
    .select(COLUMNS)
    .where({ group_id: key.groupId, artifact_id: key.artifactId, latest_version: true });
  if (key.branch !== undefined) query.where('branch', key.branch);
  if (key.projectName !== undefined) query.where('project_name', key.projectName);
  return query.orderBy('updated_at', 'desc').orderBy('id', 'desc').first();
}

export async function findLatest(
  db: Db,
  key: { groupId: string; artifactId: string; branch?: string; projectName?: string },
): Promise<StoredVersion> {
  const values: unknown[] = [key.groupId, key.artifactId, true];
  if (key.branch !== undefined) values.push(key.branch);
  if (key.projectName !== undefined) values.push(key.projectName);
  values.push(1);
  const shape = `latest:${key.branch !== undefined}:${key.projectName !== undefined}`;
  const [row] = await cachedRows(db, shape, values, () => latestQuery(db, key));
  if (!row) {
    const scope = [key.branch && `branch ${key.branch}`, key.projectName && `project ${key.projectName}`].filter(Boolean);
    throw new AppError(
      'not_found',
      `no latest version of ${key.groupId}:${key.artifactId}${scope.length ? ` on ${scope.join(', ')}` : ''}`,
    );
  }
  return fromRow(row);
}

export async function findByUid(db: Db, uid: string): Promise<StoredVersion> {
  const row = await db('versions').select(COLUMNS).where({ uid }).first();
  if (!row) throw new AppError('not_found', `no version record with uid ${uid}`);
  return fromRow(row);
}

/** The record stored under these coordinates, if any. */
export async function findByCoordinates(
  db: Db,
  coordinates: { projectName: string; branch: string; groupId: string; artifactId: string; version: string },
): Promise<StoredVersion | undefined> {
  const row = await db('versions')
    .select(COLUMNS)
    .where({
      project_name: coordinates.projectName,
      branch: coordinates.branch,
      group_id: coordinates.groupId,
      artifact_id: coordinates.artifactId,
      version: coordinates.version,
    })
    .first();
  return row ? fromRow(row) : undefined;
}
