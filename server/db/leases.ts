// The schedule_leases table: which instance runs a task now, until when, and when it is due next.
// Every time is the database's, so instances whose clocks differ still agree.
import type { Knex } from 'knex';
import { dialectOf } from './dialects/index.js';
import { toDate } from './rows.js';

const TABLE = 'schedule_leases';

/** The database's time now. */
export async function databaseNow(db: Knex): Promise<Date> {
  const row = await db.select(db.raw('? as now', [dialectOf(db).now(db)])).first();
  return toDate((row as { now: unknown }).now);
}

/** Makes the task's row, first due at `firstRun`, unless it is there already. */
export async function ensureLease(db: Knex, name: string, firstRun: Date): Promise<void> {
  await dialectOf(db).insertIfAbsent(db, TABLE, { name, holder: null, lease_until: null, next_run_at: firstRun, last_run_at: null });
}

/**
 * Takes the task for `leaseMs` when it is due and no one holds it (or the holder's lease has run
 * out: it died). One statement, so only one instance can win: true when this one did.
 */
export async function claimDueLease(db: Knex, name: string, holder: string, leaseMs: number): Promise<boolean> {
  const dialect = dialectOf(db);
  const now = dialect.now(db);
  const taken = await db(TABLE)
    .where({ name })
    .andWhere('next_run_at', '<=', now)
    .andWhere((q) => q.whereNull('lease_until').orWhere('lease_until', '<=', now))
    .update({ holder, lease_until: dialect.nowPlus(db, leaseMs), last_run_at: now });
  return Number(taken) === 1;
}

/** Extends the lease of a task that is still running; false when this instance no longer holds it. */
export async function renewLease(db: Knex, name: string, holder: string, leaseMs: number): Promise<boolean> {
  const renewed = await db(TABLE).where({ name, holder }).update({ lease_until: dialectOf(db).nowPlus(db, leaseMs) });
  return Number(renewed) === 1;
}

/** Lets go of the task after a run, due next at `nextRun`. */
export async function releaseLease(db: Knex, name: string, holder: string, nextRun: Date): Promise<void> {
  await db(TABLE).where({ name, holder }).update({ holder: null, lease_until: null, next_run_at: nextRun });
}

export interface LeaseRow {
  name: string;
  holder: string | null;
  leaseUntil: Date | null;
  nextRunAt: Date;
  lastRunAt: Date | null;
}

export async function readLease(db: Knex, name: string): Promise<LeaseRow | undefined> {
  const row = await db(TABLE).select('name', 'holder', 'lease_until', 'next_run_at', 'last_run_at').where({ name }).first();
  if (!row) return undefined;
  return { name: row.name, holder: row.holder, leaseUntil: row.lease_until, nextRunAt: row.next_run_at, lastRunAt: row.last_run_at };
}
