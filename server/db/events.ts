// The events table: one row per change, written by the triggers of migration 20261125100000_events
// in the transaction of the change (or by appendEvent, for changes that are not a versions row).
//
// The feed's cursor is `seq`, a commit-order number given after commit, not the row id: ids are
// taken when a transaction inserts, so a transaction that commits late can make a smaller id appear
// after a reader has passed it. sequenceEvents numbers the committed rows that have no number yet,
// one caller at a time (the event_sequence row is locked), so the numbered events are always a
// gapless prefix and a reader that asks for `seq > cursor` never skips one. The same on every
// database kind, with no snapshot arithmetic (docs/webhooks.md, "The feed").
import type { Knex } from 'knex';
import { type Db, type VersionChange, dialectOf } from './dialects/index.js';
import { affectedCount, toDate, toNumber } from './rows.js';

export type { VersionChange } from './dialects/index.js';

export interface StoredEvent {
  id: number;
  seq: number | null;
  type: string;
  projectName: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

const COLUMNS = ['id', 'seq', 'type', 'project_name', 'data', 'created_at'];

function fromRow(row: Record<string, unknown>): StoredEvent {
  return {
    id: toNumber(row.id),
    seq: row.seq === null || row.seq === undefined ? null : toNumber(row.seq),
    type: String(row.type),
    projectName: (row.project_name as string | null) ?? null,
    data: JSON.parse(String(row.data)) as Record<string, unknown>,
    createdAt: toDate(row.created_at),
  };
}

/**
 * Says what this transaction's next changes to versions are (null: publishes), for the event
 * triggers: `latest` moves only latest flags (a key's latest stops being latest and another takes
 * over in the same transaction: one `latest.moved` from the old to the new, e.g. a forced delete
 * promoting the next version), `restore` puts records back from the trash (`version.restored`),
 * `quiet` writes no event. Deletes are always `version.deleted`. Set it back to null before the
 * transaction ends: on MariaDB and MySQL it belongs to the connection.
 */
export function markVersionChange(trx: Knex.Transaction, change: VersionChange | null): Promise<void> {
  return dialectOf(trx).setVersionChange(trx, change);
}

/** Writes an event in the caller's transaction (changes that are not a versions row, e.g. retention.finished). */
export async function appendEvent(db: Db, type: string, data: Record<string, unknown>, projectName: string | null = null): Promise<void> {
  await db('events').insert({ type, project_name: projectName, data: JSON.stringify(data) });
}

/** A newly numbered event, as far as its deliveries are decided (the rest is read for those only: eventsWithData). */
export interface NumberedEvent {
  id: number;
  seq: number;
  type: string;
  projectName: string | null;
}

/**
 * Numbers the committed events that have none yet, in id order, up to `limit`, and returns them in
 * that order. Runs inside the caller's transaction (which may act on them, e.g. queue deliveries).
 * When another caller is numbering now: with `wait`, numbers what is left after it commits; else
 * returns nothing.
 */
export async function sequenceEvents(trx: Knex.Transaction, options: { limit?: number; wait?: boolean } = {}): Promise<NumberedEvent[]> {
  const limit = options.limit ?? 500;
  const locked = trx('event_sequence').select('last_seq').where({ name: 'events' }).forUpdate();
  const counter = await (options.wait ? locked : locked.skipLocked()).first();
  if (!counter) return [];
  const last = toNumber(counter.last_seq);
  const events = (await dialectOf(trx).numberEvents(trx, last, limit))
    .map((row) => ({
      id: toNumber(row.id),
      seq: toNumber(row.seq),
      type: String(row.type),
      projectName: (row.project_name as string | null) ?? null,
    }))
    .sort((a, b) => a.seq - b.seq);
  if (events.length === 0) return [];
  await trx('event_sequence').where({ name: 'events' }).update({ last_seq: last + events.length });
  return events;
}

/** The events with their data and time, in the order given. */
export async function eventsWithData(db: Db, events: NumberedEvent[]): Promise<StoredEvent[]> {
  const rows: Record<string, unknown>[] = await db('events').select('id', 'data', 'created_at').whereIn('id', events.map((e) => e.id));
  const byId = new Map(rows.map((row) => [toNumber(row.id), row]));
  return events.map((event) => {
    const row = byId.get(event.id);
    // Numbered events are locked by the transaction that numbered them until it ends.
    if (row === undefined) throw new Error(`event ${event.id} has no row`);
    return { ...event, data: JSON.parse(String(row.data)) as Record<string, unknown>, createdAt: toDate(row.created_at) };
  });
}

export interface EventFilter {
  /** Only events with a greater seq. */
  after: number;
  limit: number;
  /** Only this project's events. */
  projectName?: string;
  types?: string[];
}

/** Numbered events after the cursor, in commit order. */
export async function readEvents(db: Db, filter: EventFilter): Promise<StoredEvent[]> {
  const query = db('events').select(COLUMNS).where('seq', '>', filter.after).orderBy('seq').limit(filter.limit);
  if (filter.projectName !== undefined) query.where('project_name', filter.projectName);
  if (filter.types?.length) query.whereIn('type', filter.types);
  return (await query).map(fromRow);
}

/**
 * The largest id of a committed event that has no number yet (up to `upTo`), or undefined when every
 * committed event has one: what a reader waits on before it reads (the outbox numbers them).
 */
export async function lastUnnumbered(db: Db, upTo?: number): Promise<number | undefined> {
  const query = db('events').max({ id: 'id' }).whereNull('seq');
  if (upTo !== undefined) query.where('id', '<=', upTo);
  const [row] = await query;
  return row?.id === null || row?.id === undefined ? undefined : toNumber(row.id);
}

/** The last seq given: where a feed with no cursor starts when it wants only new events. */
export async function lastSeq(db: Db): Promise<number> {
  const row = await db('event_sequence').select('last_seq').where({ name: 'events' }).first();
  return toNumber(row?.last_seq);
}

/** Deletes events older than `days` (docs/webhooks.md, "Retention"). Scheduled work: (db, now). */
export async function expireEvents(db: Db, now: Date, days: number): Promise<number> {
  return affectedCount(await db('events').where('created_at', '<', new Date(now.getTime() - days * 86_400_000)).whereNotNull('seq').delete());
}
