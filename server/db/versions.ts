// The versions table: one record per coordinates, at most one latest per project, artifact, branch.
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { PageRequest, SearchFilters, SortField } from '../../common/schemas/repositories.js';
import { versionKey } from '../../common/version-key.js';
import { type Db, type ImmutableRule, type Precondition, type PublishKey, type PublishedRow, type SqlForm, dialectOf } from './dialects/index.js';
import type { AuditEntry } from './audit.js';
import { retryConflicts } from './faults.js';
import { markVersionChange } from './events.js';
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
  /**
   * Where it was built (JSON of common/schemas Provenance), copied from the verified ID token of the
   * token it was published through; null: not verified. Once stored it never changes: a republish
   * keeps it (upsertVersion).
   */
  provenance?: string | null;
}

/** A version's veto: while set, it cannot be promoted anywhere. */
export interface StoredVeto {
  reason: string;
  by: string;
  at: Date;
}

/** A stored record: its fields and its uid. The service shapes it for an answer. */
export interface StoredVersion extends VersionFields {
  uid: string;
  /** null when not vetoed (and for rows read without the veto columns, as events carry them). */
  veto?: StoredVeto | null;
}

/** The columns of a record as it is read (also by the tables that join it: ./environment-current.ts). */
export const COLUMNS = [
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
  'provenance',
  'veto_reason',
  'veto_by',
  'veto_at',
];

/**
 * Every column a record has beside the table's own `id`: the columns it is read with, its version
 * order's sort key and its times. The trash keeps exactly these (versions_trash, with its own `id`,
 * `deleted_at` and `deleted_by`), so a record moves there and back whole; test/server/versions-columns.test.ts
 * holds both tables to this list on every kind.
 */
export const RECORD_COLUMNS = [...COLUMNS, 'version_key', 'created_at', 'updated_at'];

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
    provenance: (row.provenance as string | null) ?? null,
    veto:
      row.veto_reason === null || row.veto_reason === undefined
        ? null
        : { reason: String(row.veto_reason), by: String(row.veto_by), at: toDate(row.veto_at) },
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
    provenance: fields.provenance ?? null,
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
 * record of its key in the same step (server/db/dialects). With a precondition
 * (server/policy/publish.ts) nothing is written unless it holds, nor with an immutable version's
 * rule (server/services/immutable.ts) unless that holds once the key's lock is taken: then
 * undefined. With `audit`, the request's audit entry is written with the record, its actor whom
 * the precondition's row names (Dialect.publishVersionRow). A deadlock, serialization failure or
 * lock timeout all the same (the database rolled the work back) is retried.
 */
export function upsertVersion(
  db: Knex,
  fields: VersionFields,
  precondition?: Precondition,
  immutable?: ImmutableRule,
  audit?: AuditEntry,
): Promise<PublishedRow | undefined> {
  if (audit && !precondition) throw new Error("a publish's audit entry names whom its precondition found: give both");
  const dialect = dialectOf(db);
  return retryConflicts(() => dialect.publishVersionRow(db, toRow(fields), COORDINATE_COLUMNS, publishKey(fields), fields.latestVersion, precondition, immutable, audit));
}

/**
 * Turns a filter value into a LIKE pattern when it holds a `*` wildcard (`\*` is a literal
 * asterisk), or into an exact value. LIKE's own metacharacters in the value are escaped.
 */
export function filterPattern(value: string): { like: string } | { exact: string } {
  // Without a `*` there is neither a wildcard nor an escaped one: the value as it is (most searches,
  // and no string built a character at a time).
  if (!value.includes('*')) return { exact: value };
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

/** Each filter's column and how to read it (a function, so that every read is of one known field). */
interface FilterColumn {
  field: string;
  column: string;
  of: (filters: SearchFilters) => string | undefined;
}

const FILTER_COLUMNS: FilterColumn[] = [
  { field: 'projectName', column: 'project_name', of: (f) => f.projectName },
  { field: 'branch', column: 'branch', of: (f) => f.branch },
  { field: 'groupId', column: 'group_id', of: (f) => f.groupId },
  { field: 'artifactId', column: 'artifact_id', of: (f) => f.artifactId },
  { field: 'version', column: 'version', of: (f) => f.version },
  { field: 'type', column: 'type', of: (f) => f.type },
];

/** The columns version_counts keeps (all filters but `version` and `uid`). */
const COUNTED_COLUMNS = FILTER_COLUMNS.filter(({ field }) => field !== 'version');

/**
 * The WHERE of a query, walked from the filters once: each condition and its value go in together,
 * and `shape` names the SQL (which filters, exact or wildcard), so it is built once per shape.
 */
interface Where {
  shape: string;
  values: unknown[];
  conditions: string[];
}

/** "Latest only" on version_counts, whose rows are few per key: no index to choose. */
const COUNTED_LATEST = 'latest_version = true';

function whereOf(form: SqlForm, filters: SearchFilters, table: 'versions' | 'version_counts'): Where {
  const columns = table === 'versions' ? FILTER_COLUMNS : COUNTED_COLUMNS;
  const where: Where = { shape: '', values: [], conditions: [] };
  for (const { field, column, of } of columns) {
    const value = of(filters);
    if (typeof value !== 'string') continue;
    const pattern = filterPattern(value);
    if ('like' in pattern) {
      where.shape += `${field}~`;
      where.conditions.push(`${column} like ? ${form.likeEscape}`);
      where.values.push(pattern.like);
    } else {
      where.shape += `${field}=`;
      where.conditions.push(`${column} = ?`);
      where.values.push(pattern.exact);
    }
  }
  if (filters.latestVersion === true) {
    where.shape += 'latest';
    where.conditions.push(table === 'versions' ? form.latestOnly : COUNTED_LATEST);
  }
  if (table === 'versions' && filters.verified === true) {
    where.shape += ',verified';
    where.conditions.push('provenance is not null');
  }
  if (table === 'versions' && filters.uid !== undefined) {
    where.shape += ',uid';
    where.conditions.push('uid = ?');
    where.values.push(filters.uid);
  }
  if (table === 'versions' && filters.environment !== undefined) {
    // The records current in the environment (of their own project: a record is only ever current
    // in its project's environments). Uncorrelated, so that the planner can start from the few rows
    // of environment_current (environment_current_artifact) and join the records by uid.
    where.shape += ',environment';
    where.conditions.push('uid in (select c.uid from environment_current c where c.environment = ?)');
    where.values.push(filters.environment);
  }
  return where;
}

const whereSql = (where: Where) => (where.conditions.length ? ` where ${where.conditions.join(' and ')}` : '');

/** SQL with `?` placeholders, its values, and the name of its shape (the statement cache's key). */
export interface ShapedQuery {
  shape: string;
  values: unknown[];
  build: () => string;
}

/** The page query of a search: order, then the default order (newest first) as the tie-breaker. */
export function pageQuery(form: SqlForm, filters: SearchFilters, paging: PageRequest): ShapedQuery {
  const where = whereOf(form, filters, 'versions');
  const offset = (paging.page - 1) * paging.size;
  const direction = paging.sortDirection === 'DESC' ? 'desc' : 'asc';
  const sort = paging.sortField && SORT_COLUMNS[paging.sortField];
  const values = [...where.values, paging.size, ...(offset > 0 ? [offset] : [])];
  return {
    shape: `page:${where.shape}:${sort ? `${sort} ${direction}` : ''}:${offset > 0}${readsFirst(form, filters) ? ':first' : ''}`,
    values,
    build: () => {
      const order = [...(sort ? [sort === 'repository_url' ? form.nullsLast(sort, direction) : `${sort} ${direction}`] : []), 'creation_date desc', 'id desc'];
      return pageSql(form, filters, whereSql(where), `order by ${order.join(', ')} limit ?${offset > 0 ? ' offset ?' : ''}`);
    },
  };
}

/**
 * The total of a search. Filters on the columns that version_counts keeps are answered from its
 * summary rows (a few, however many records match); only `version`, `uid`, `verified` and `environment` need the records.
 */
export function countQuery(form: SqlForm, filters: SearchFilters): ShapedQuery {
  if (filters.version === undefined && filters.uid === undefined && filters.verified !== true && filters.environment === undefined) {
    const where = whereOf(form, filters, 'version_counts');
    return { shape: `count:summary:${where.shape}`, values: where.values, build: () => `select coalesce(sum(records), 0) as n from version_counts${whereSql(where)}` };
  }
  const where = whereOf(form, filters, 'versions');
  return { shape: `count:records:${where.shape}`, values: where.values, build: () => `select count(*) as n from versions${whereSql(where)}` };
}

/** The latest record of an artifact; the most recently written where several keys match. */
export function latestQuery(form: SqlForm, key: { groupId: string; artifactId: string; branch?: string; projectName?: string }): ShapedQuery {
  const conditions = ['group_id = ?', 'artifact_id = ?', form.latestOnly];
  const values: unknown[] = [key.groupId, key.artifactId];
  if (key.branch !== undefined) {
    conditions.push('branch = ?');
    values.push(key.branch);
  }
  if (key.projectName !== undefined) {
    conditions.push('project_name = ?');
    values.push(key.projectName);
  }
  return {
    shape: `latest:${key.branch !== undefined}:${key.projectName !== undefined}`,
    values,
    build: () => `select ${COLUMNS.join(', ')} from versions where ${conditions.join(' and ')} order by updated_at desc, id desc limit 1`,
  };
}

const run = (db: Db, query: ShapedQuery) => cachedRows(db, query.shape, query.values, query.build);

export async function searchVersions(
  db: Db,
  filters: SearchFilters,
  paging: PageRequest,
): Promise<{ items: StoredVersion[]; total: number }> {
  const form = dialectOf(db);
  const [rows, counted] = await Promise.all([run(db, pageQuery(form, filters, paging)), run(db, countQuery(form, filters))]);
  return { items: rows.map(fromRow), total: toNumber(counted[0]?.n) };
}

export async function findLatest(
  db: Db,
  key: { groupId: string; artifactId: string; branch?: string; projectName?: string },
): Promise<StoredVersion> {
  const [row] = await run(db, latestQuery(dialectOf(db), key));
  if (!row) {
    const scope = [key.branch && `branch ${key.branch}`, key.projectName && `project ${key.projectName}`].filter(Boolean);
    throw new AppError(
      'not_found',
      `no latest version of ${key.groupId}:${key.artifactId}${scope.length ? ` on ${scope.join(', ')}` : ''}`,
    );
  }
  return fromRow(row);
}

/**
 * Whether a search reads its matching records first and orders them after (SqlForm.fenced): a
 * latest-only search within one group (exact, not a pattern), whose latest records are few (one per
 * artifact, branch and project) however long their histories. Ordered and paged in one query,
 * PostgreSQL may walk versions_group_artifact in the page's order and filter out every record that
 * is not latest until the page is full, which for an artifact with 20,000 versions is all of them:
 * 7-10 ms a search against 0.03 ms (bench/results/2026-11-29-latest-search.md). Read first, they
 * come from versions_one_latest whatever the planner estimates.
 */
function readsFirst(form: SqlForm, filters: SearchFilters): boolean {
  return form.fenced !== undefined && filters.latestVersion === true && filters.groupId !== undefined && 'exact' in filterPattern(filters.groupId);
}

/** A search's page: its records, ordered and paged by `page` (`order by ... limit ?`). */
function pageSql(form: SqlForm, filters: SearchFilters, where: string, page: string): string {
  if (readsFirst(form, filters)) return `${form.fenced!('matched', `select * from versions${where}`)} select ${COLUMNS.join(', ')} from matched ${page}`;
  return `select ${COLUMNS.join(', ')} from versions${where} ${page}`;
}

export async function findByUid(db: Db, uid: string): Promise<StoredVersion> {
  const [row] = await cachedRows(db, 'by-uid', [uid], () => `select ${COLUMNS.join(', ')} from versions where uid = ? limit 1`);
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

/**
 * Sets (or, with null, lifts) the veto of the record of this uid, with `event` written in the same
 * transaction when given: the record as it is now. The change writes no version event of its own
 * (it is no publish: migration 20261125100000_events). Not found when there is no such record.
 */
export async function setVeto(
  db: Knex,
  uid: string,
  veto: StoredVeto | null,
  event?: (trx: Knex.Transaction, row: Record<string, unknown>) => Promise<void>,
): Promise<StoredVersion> {
  return retryConflicts(() =>
    db.transaction(async (trx) => {
      await markVersionChange(trx, 'quiet');
      try {
        await trx('versions')
          .where({ uid })
          .update({ veto_reason: veto?.reason ?? null, veto_by: veto?.by ?? null, veto_at: veto?.at ?? null });
      } finally {
        await markVersionChange(trx, null);
      }
      const row = (await trx('versions').select(COLUMNS).where({ uid }).first()) as Record<string, unknown> | undefined;
      if (!row) throw new AppError('not_found', `no version record with uid ${uid}`);
      await event?.(trx, row);
      return fromRow(row);
    }),
  );
}

/**
 * Moves these versions rows (read with `id` and RECORD_COLUMNS) to the trash: copies them into
 * versions_trash, deleted at `now` by `deletedBy`, and deletes them from versions. The one move of
 * records to the trash, for a delete (./trash.ts) and a retention run (./retention.ts). Each caller
 * holds the key's lock and the rows' locks, and a delete that is half of a latest move marks it so
 * for the event triggers (./trash.ts); otherwise each row's delete is a `version.deleted` event.
 */
export async function moveToTrash(trx: Knex.Transaction, rows: Record<string, unknown>[], deletedBy: string, now: Date): Promise<void> {
  if (rows.length === 0) return;
  const by = deletedBy.slice(0, 200);
  await trx('versions_trash').insert(rows.map((row) => ({ ...Object.fromEntries(RECORD_COLUMNS.map((c) => [c, row[c]])), deleted_at: now, deleted_by: by })));
  await trx('versions').whereIn('id', rows.map((row) => row.id as number)).delete();
}
