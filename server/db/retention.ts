// Retention policies, their daily runs, and the query of what a policy removes (docs/retention.md).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { RetentionRules } from '../../common/schemas/retention.js';
import { type Db, dialectOf } from './dialects/index.js';
import { retryConflicts } from './faults.js';
import { isUniqueViolation, toDate, toNumber } from './rows.js';
import { type StoredVersion, filterPattern, fromRow, publishKey } from './versions.js';

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
 */
function lookedAt(db: Db, rules: RetentionRules): Knex.QueryBuilder {
  const query = db('versions').select(
    'id',
    'uid',
    'project_name',
    'branch',
    'group_id',
    'artifact_id',
    'version',
    'version_key',
    'repository_url',
    'creation_date',
    'type',
    'latest_version',
    'description',
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

/** How many records the policy looks at and how many of them it removes now, and the first `sampleSize` of those. */
export async function removableSummary(db: Db, rules: RetentionRules, now: Date, sampleSize: number): Promise<{ lookedAt: number; removable: number; sample: StoredVersion[] }> {
  const [all, gone, sample] = await Promise.all([
    db.from(lookedAt(db, rules).as('c')).count({ n: '*' }).first(),
    removable(db, rules, now).count({ n: '*' }).first(),
    removable(db, rules, now).select('*').orderBy(['project_name', 'branch', 'group_id', 'artifact_id', 'version_key', 'id']).limit(sampleSize),
  ]);
  return { lookedAt: toNumber(all?.n), removable: toNumber(gone?.n), sample: sample.map(fromRow) };
}

/** The first `limit` records the policy removes now, in a stable order. */
export async function removableRecords(db: Db, rules: RetentionRules, now: Date, limit: number): Promise<StoredVersion[]> {
  const rows = await removable(db, rules, now).select('*').orderBy(['project_name', 'branch', 'group_id', 'artifact_id', 'version_key', 'id']).limit(limit);
  return rows.map(fromRow);
}

/**
 * Records moved per statement: a statement of PostgreSQL carries at most 65,535 parameters, and a
 * trash row has 16 columns (one key may have thousands of records a run removes).
 */
const TRASH_CHUNK = 1_000;

/**
 * Moves these records of one key to the trash, in one transaction under the key's publish lock.
 * A record that became the key's latest meanwhile, or is gone, is left alone: how many moved.
 */
export async function trashRecordsOfKey(db: Knex, records: StoredVersion[], deletedBy: string, now: Date): Promise<number> {
  if (records.length === 0) return 0;
  const lock = publishKey({ ...records[0]!, version: '' }).lock;
  return retryConflicts(() =>
    dialectOf(db).transactionWithKeyLock(db, lock, async (trx) => {
      let moved = 0;
      for (let from = 0; from < records.length; from += TRASH_CHUNK) {
        const rows = await trx('versions')
          .select('*')
          .whereIn('uid', records.slice(from, from + TRASH_CHUNK).map((r) => r.uid))
          .where('latest_version', false)
          .forUpdate();
        if (rows.length === 0) continue;
        await trx('versions_trash').insert(
          rows.map((row: Record<string, unknown>) => {
            const { id: _id, latest_marker: _marker, ...record } = row;
            return { ...record, deleted_at: now, deleted_by: deletedBy.slice(0, 200) };
          }),
        );
        await trx('versions').whereIn('id', rows.map((row: Record<string, unknown>) => row.id as number)).delete();
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
