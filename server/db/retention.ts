// Retention policies, their daily runs, and the query of what a policy removes (docs/retention.md).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { RetentionRules } from '../../common/schemas/retention.js';
import { type Db, dialectOf } from './dialects/index.js';
import { environmentsOfRecords } from './environment-current.js';
import { retryConflicts } from './faults.js';
import { isUniqueViolation, toDate, toNumber } from './rows.js';
import { COLUMNS, RECORD_COLUMNS, type StoredVersion, filterPattern, fromRow, moveToTrash, publishKey } from './versions.js';

export interface PolicyRow {
  id: string;
  name: string;
  rules: RetentionRules;
  enabled: boolean;
  dryRunHash: string | null;
  createdAt: Date;
  updatedAt: Date;
}

function toPolicy(row: Record<string, unknown>): PolicyRow {
  return {
    id: String(row.id),
    name: String(row.name),
    rules: JSON.parse(String(row.rules)) as RetentionRules,
    enabled: Boolean(row.enabled),
    dryRunHash: (row.dry_run_hash as string | null) ?? null,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

const POLICY_COLUMNS = ['id', 'name', 'rules', 'enabled', 'dry_run_hash', 'created_at', 'updated_at'];

const nameTaken = (name: string) => new AppError('conflict', `a retention policy named "${name}" exists already`);

export async function insertPolicy(db: Db, policy: { name: string; rules: RetentionRules; enabled: boolean; now: Date }): Promise<PolicyRow> {
  const id = randomUUID();
  try {
    await db('retention_policies').insert({
      id,
      name: policy.name,
      rules: JSON.stringify(policy.rules),
      enabled: policy.enabled,
      dry_run_hash: null,
      created_at: policy.now,
      updated_at: policy.now,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(policy.name);
    throw error;
  }
  return findPolicy(db, id);
}

export async function findPolicy(db: Db, id: string): Promise<PolicyRow> {
  const row = await db('retention_policies').select(POLICY_COLUMNS).where({ id }).first();
  if (!row) throw new AppError('not_found', `no retention policy with id ${id}`);
  return toPolicy(row);
}

export async function findPolicyByName(db: Db, name: string): Promise<PolicyRow | undefined> {
  const row = await db('retention_policies').select(POLICY_COLUMNS).where({ name }).first();
  return row ? toPolicy(row) : undefined;
}

export async function listPolicies(db: Db, only: { enabled?: boolean } = {}): Promise<PolicyRow[]> {
  const query = db('retention_policies').select(POLICY_COLUMNS).orderBy('name');
  if (only.enabled !== undefined) query.where('enabled', only.enabled);
  return (await query).map(toPolicy);
}

export async function updatePolicy(
  db: Db,
  id: string,
  changes: { name?: string; rules?: RetentionRules; enabled?: boolean; dryRunHash?: string | null; now: Date },
): Promise<PolicyRow> {
  const row: Record<string, unknown> = { updated_at: changes.now };
  if (changes.name !== undefined) row.name = changes.name;
  if (changes.rules !== undefined) row.rules = JSON.stringify(changes.rules);
  if (changes.enabled !== undefined) row.enabled = changes.enabled;
  if (changes.dryRunHash !== undefined) row.dry_run_hash = changes.dryRunHash;
  await findPolicy(db, id);
  try {
    await db('retention_policies').where({ id }).update(row);
  } catch (error) {
    if (isUniqueViolation(error) && changes.name !== undefined) throw nameTaken(changes.name);
    throw error;
  }
  return findPolicy(db, id);
}

/** Deletes a policy; what it was. */
export async function deletePolicy(db: Db, id: string): Promise<PolicyRow> {
  const policy = await findPolicy(db, id);
  await db('retention_policies').where({ id }).delete();
  return policy;
}

/** `column` matches one of the globs (`*`: any characters, `\*`: an asterisk). */
function whereAnyGlob(db: Db, query: Knex.QueryBuilder, column: string, globs: string[]): void {
  const like = `?? like ? ${dialectOf(db).likeEscape}`;
  query.where((any) => {
    for (const glob of globs) {
      const pattern = filterPattern(glob);
      if ('like' in pattern) any.orWhereRaw(like, [column, pattern.like]);
      else any.orWhere(column, pattern.exact);
    }
  });
}

const DAY_MS = 86_400_000;

/**
 * The records the policy looks at (its projects and branches, but no protected branch), each with
 * its rank in its key by version order (1: the highest) and its branch's newest creation date.
 *
 * The newest date is the first in the branch by creation date, newest first, not the branch's
 * `max(creation_date)` over the whole partition: MariaDB (10.11) works such a frame out again for
 * every row, in time quadratic in the records of a branch (8,000 records of one key: 76 s), while
 * `first_value` takes it from the frame's first row. The same value on every kind.
 *
 * Each is read with a record's columns (COLUMNS), so a sample shows a record as a search does.
 */
function lookedAt(db: Db, rules: RetentionRules): Knex.QueryBuilder {
  const query = db('versions').select(
    'id',
    'version_key',
    ...COLUMNS,
    db.raw('row_number() over (partition by project_name, branch, group_id, artifact_id order by version_key desc, id desc) as rank_in_key'),
    db.raw('first_value(creation_date) over (partition by project_name, branch order by creation_date desc) as branch_last'),
  );
  whereAnyGlob(db, query, 'project_name', rules.projects);
  whereAnyGlob(db, query, 'branch', rules.branches);
  query.whereNot((protectedBranch) => whereAnyGlob(db, protectedBranch, 'branch', rules.protectedBranches));
  return query;
}

/**
 * What the policy removes at `now`: never a key's latest; beyond the `keepLast` highest of each
 * key, those older than `olderThanDays` (all of them without it); and every record of a branch
 * with no publish for `inactiveBranchDays`.
 */
function removable(db: Db, rules: RetentionRules, now: Date): Knex.QueryBuilder {
  return byRules(db, rules, now).whereNotExists(currentSomewhere(db));
}

/** The records current in an environment (docs/api.md, "Environments and promotion"), which no policy removes. */
const currentSomewhere = (db: Db) => db('environment_current as e').select(db.raw('1')).whereRaw('e.uid = c.uid');

/** What the rules remove at `now`, current versions of an environment included. */
function byRules(db: Db, rules: RetentionRules, now: Date): Knex.QueryBuilder {
  const query = db.from(lookedAt(db, rules).as('c')).where('latest_version', false);
  query.where((goes) => {
    goes.where((beyondKept) => {
      beyondKept.where('rank_in_key', '>', rules.keepLast);
      if (rules.olderThanDays) beyondKept.where('creation_date', '<', new Date(now.getTime() - rules.olderThanDays * DAY_MS));
    });
    if (rules.inactiveBranchDays) goes.orWhere('branch_last', '<', new Date(now.getTime() - rules.inactiveBranchDays * DAY_MS));
  });
  return query;
}

/** How many records the policy removes now, by version. */
async function removableByVersion(db: Db, rules: RetentionRules, now: Date): Promise<Map<string, number>> {
  const rows = await removable(db, rules, now).select('version').count({ n: '*' }).groupBy('version').orderBy('version');
  return new Map(rows.map((row: Record<string, unknown>) => [String(row.version), toNumber(row.n)]));
}

/** Versions per statement when a run names the versions it removes (well below any kind's limit on values). */
const VERSION_CHUNK = 1_000;

/**
 * The first `limit` records the policy removes now, in a stable order; only those of `versions`
 * when given (a few statements for many versions).
 */
async function recordsOf(db: Db, rules: RetentionRules, now: Date, limit: number, versions?: string[]): Promise<StoredVersion[]> {
  const page = (max: number, only?: string[]) => {
    const query = removable(db, rules, now);
    if (only) query.whereIn('version', only);
    return query.select('*').orderBy(['project_name', 'branch', 'group_id', 'artifact_id', 'version_key', 'id']).limit(max);
  };
  if (!versions) return (await page(limit)).map(fromRow);
  const records: StoredVersion[] = [];
  for (let from = 0; from < versions.length && records.length < limit; from += VERSION_CHUNK) {
    records.push(...(await page(limit - records.length, versions.slice(from, from + VERSION_CHUNK))).map(fromRow));
  }
  return records;
}

/**
 * What the policy removes now, less the records whose version `spare` names (immutable versions,
 * which no policy removes): how many of them there are, and the versions that remain (undefined
 * when none is spared).
 */
async function sparing(db: Db, rules: RetentionRules, now: Date, spare: (version: string) => boolean): Promise<{ removable: number; spared: number; versions?: string[] }> {
  let removable = 0;
  let spared = 0;
  const versions: string[] = [];
  for (const [version, records] of await removableByVersion(db, rules, now)) {
    if (spare(version)) spared += records;
    else {
      removable += records;
      versions.push(version);
    }
  }
  return { removable, spared, versions: spared > 0 ? versions : undefined };
}

/**
 * How many records the policy looks at, how many of them it removes now, how many it would but
 * spares (their version is one `spare` names; `sparedCurrent`: they are current in an environment),
 * and the first `sampleSize` of those it removes.
 */
export async function removableSummary(
  db: Db,
  rules: RetentionRules,
  now: Date,
  sampleSize: number,
  spare: (version: string) => boolean,
): Promise<{ lookedAt: number; removable: number; spared: number; sparedCurrent: number; sample: StoredVersion[] }> {
  const [all, gone, current] = await Promise.all([
    db.from(lookedAt(db, rules).as('c')).count({ n: '*' }).first(),
    sparing(db, rules, now, spare),
    byRules(db, rules, now).whereExists(currentSomewhere(db)).count({ n: '*' }).first(),
  ]);
  const sample = sampleSize > 0 && gone.removable > 0 ? await recordsOf(db, rules, now, sampleSize, gone.versions) : [];
  return { lookedAt: toNumber(all?.n), removable: gone.removable, spared: gone.spared, sparedCurrent: toNumber(current?.n), sample };
}

/** The first `limit` records the policy removes now, in a stable order, but none of a version `spare` names. */
export async function removableRecords(db: Db, rules: RetentionRules, now: Date, limit: number, spare: (version: string) => boolean): Promise<StoredVersion[]> {
  const { removable, versions } = await sparing(db, rules, now, spare);
  return removable > 0 ? recordsOf(db, rules, now, limit, versions) : [];
}

/**
 * Records moved per statement: a statement of PostgreSQL carries at most 65,535 parameters, and a
 * trash row has the record's columns (RECORD_COLUMNS) and two more, 20 in all (one key may have
 * thousands of records a run removes).
 */
const TRASH_CHUNK = 1_000;

/**
 * Moves these records of one key to the trash, in one transaction under the key's publish lock.
 * A record that became the key's latest meanwhile, was promoted into an environment, or is gone,
 * is left alone: how many moved.
 */
export async function trashRecordsOfKey(db: Knex, records: StoredVersion[], deletedBy: string, now: Date): Promise<number> {
  if (records.length === 0) return 0;
  const lock = publishKey({ ...records[0]!, version: '' }).lock;
  return retryConflicts(() =>
    dialectOf(db).transactionWithKeyLock(db, lock, async (trx) => {
      let moved = 0;
      for (let from = 0; from < records.length; from += TRASH_CHUNK) {
        let rows = await trx('versions')
          .select(['id', ...RECORD_COLUMNS])
          .whereIn('uid', records.slice(from, from + TRASH_CHUNK).map((r) => r.uid))
          .where('latest_version', false)
          .forUpdate();
        // Promoted meanwhile: a promotion holds its record's lock, so what it wrote is seen now.
        const current = await environmentsOfRecords(trx, rows.map((row: Record<string, unknown>) => String(row.uid)));
        if (current.size > 0) rows = rows.filter((row: Record<string, unknown>) => !current.has(String(row.uid)));
        if (rows.length === 0) continue;
        await moveToTrash(trx, rows, deletedBy, now);
        moved += rows.length;
      }
      return moved;
    }),
  );
}


/** A claimed run of a policy on a day: its id and the claim that owns it. */
export interface RunClaim {
  id: number;
  claim: string;
}

/**
 * Claims the run of this policy on this day: true for the one caller that inserts it, or that
 * takes over a run whose owner's lease ran out (database time) before it finished. A finished run
 * is never claimed again.
 */
export async function claimRun(db: Db, policyId: string, day: string, leaseSeconds: number, now: Date): Promise<RunClaim | undefined> {
  const claim = randomUUID();
  await dialectOf(db).insertIfAbsent(db, 'retention_runs', {
    policy_id: policyId,
    day,
    status: 'running',
    lease_until: dialectOf(db).nowPlus(db, leaseSeconds * 1000),
    claimed_by: claim,
    started_at: now,
  });
  await db('retention_runs')
    .where({ policy_id: policyId, day, status: 'running' })
    .where('lease_until', '<', dialectOf(db).now(db))
    .update({ claimed_by: claim, lease_until: dialectOf(db).nowPlus(db, leaseSeconds * 1000), started_at: now });
  const row = await db('retention_runs').select('id', 'claimed_by', 'status').where({ policy_id: policyId, day }).first();
  return row && row.status === 'running' && row.claimed_by === claim ? { id: Number(row.id), claim } : undefined;
}

/** Extends the lease of a run this claim still owns. */
export async function renewRun(db: Db, run: RunClaim, leaseSeconds: number): Promise<void> {
  await db('retention_runs').where({ id: run.id, claimed_by: run.claim }).update({ lease_until: dialectOf(db).nowPlus(db, leaseSeconds * 1000) });
}

export async function finishRun(db: Db, run: RunClaim, counts: { deleted: number; kept: number }, now: Date): Promise<void> {
  await db('retention_runs')
    .where({ id: run.id, claimed_by: run.claim })
    .update({ status: 'finished', finished_at: now, deleted: counts.deleted, kept: counts.kept });
}
