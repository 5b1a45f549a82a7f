// A PostgreSQL read replica (docs/operations.md, "Read replicas"): how far behind it is, checked
// once a second, and whether a read may go there now, waiting briefly for it to replay a client's
// last write (read-your-writes by WAL position). PostgreSQL only: WAL positions and replay are its.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { cachedRows } from './statements.js';

/** How often the replica's lag is measured: requests read the last measure, never measure. */
const CHECK_EVERY_MS = 1_000;
/** The longest a read waits for the replica to replay the position its client sent. */
export const POSITION_WAIT_MS = 500;
/** How often the replica is asked how far it has replayed while reads wait for it. */
const POSITION_POLL_MS = 10;

/** A WAL position as PostgreSQL writes it (`0/3000148`), as a number; undefined when it is not one. */
export function parsePosition(text: string): bigint | undefined {
  const m = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text);
  return m ? (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`) : undefined;
}

/**
 * The primary's WAL position now: once a write has committed, a replica that has replayed this far
 * has it. One prepared statement, sent after the commit.
 */
export async function currentPosition(db: Knex): Promise<string> {
  const [row] = await cachedRows(db, 'wal-position', [], () => 'select pg_current_wal_lsn()::text as position');
  return String(row!.position);
}

/**
 * How far the read endpoint has replayed. A server that is not replaying (a replica promoted
 * since, reached through the replicas' address) has what it wrote: its own position.
 */
const REPLAYED = 'coalesce(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text';

export interface ReadRouting {
  /** The replica's pool. */
  replica: Knex;
  /**
   * Whether a read may go to the replica now: it answered the last check, was at most the allowed
   * lag behind, and has replayed `position` (waiting up to POSITION_WAIT_MS for that).
   */
  usable(position: bigint | undefined): Promise<boolean>;
  /** A read failed on the replica: it is skipped until a check finds it well again. */
  failed(): void;
  /** How far behind the replica was at the last check, in milliseconds; undefined when it did not answer. */
  lagMs(): number | undefined;
  stop(): Promise<void>;
}

export function startReadRouting(primary: Knex, replica: Knex, maxLagMs: number, log: Logger): ReadRouting {
  let measured: { lagMs: number; replayed: bigint } | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let checking: Promise<void> = Promise.resolve();
  let wasUsable = false;
  // The primary's position at each check the replica has not replayed yet, oldest first: the
  // replica is behind by at least the age of the oldest (time since a replay timestamp would count
  // an idle primary as lag, and the idle time before a write as the write's lag).
  let unreplayed: { at: number; position: bigint }[] = [];

  const check = async () => {
    const primaryAt = await currentPosition(primary).then(parsePosition, () => undefined);
    if (primaryAt !== undefined) unreplayed.push({ at: Date.now(), position: primaryAt });
    try {
      const result = (await replica.raw(`select pg_is_in_recovery() as recovering, ${REPLAYED} as replayed`)) as {
        rows: { recovering: boolean; replayed: string }[];
      };
      const row = result.rows[0]!;
      const replayed = parsePosition(row.replayed) ?? 0n;
      unreplayed = row.recovering ? unreplayed.filter((sample) => sample.position > replayed) : [];
      const lagMs = unreplayed.length === 0 ? 0 : Date.now() - unreplayed[0]!.at;
      measured = { lagMs, replayed: measured && measured.replayed > replayed ? measured.replayed : replayed };
    } catch {
      measured = undefined;
      unreplayed = [];
    }
    const usable = measured !== undefined && measured.lagMs <= maxLagMs;
    if (usable !== wasUsable) {
      if (usable) log.info('read replica in use');
      else log.warn({ lagMs: measured?.lagMs ?? null }, measured ? 'read replica too far behind: reading from the primary' : 'read replica not answering: reading from the primary');
      wasUsable = usable;
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      checking = check().finally(schedule);
    }, CHECK_EVERY_MS);
    timer.unref();
  };
  checking = check().finally(schedule);

  // Reads waiting for the replica to replay a position; one poll serves them all.
  const waiting = new Set<{ position: bigint; done(replayed: boolean): void }>();
  let polling = false;
  const poll = async () => {
    polling = true;
    try {
      while (waiting.size > 0 && !stopped) {
        const result = (await replica.raw(`select ${REPLAYED} as replayed`)) as { rows: { replayed: string }[] };
        const replayed = parsePosition(result.rows[0]!.replayed) ?? 0n;
        if (measured && replayed > measured.replayed) measured.replayed = replayed;
        for (const waiter of waiting) if (waiter.position <= replayed) waiter.done(true);
        if (waiting.size > 0) await new Promise((resolve) => setTimeout(resolve, POSITION_POLL_MS));
      }
    } catch {
      for (const waiter of waiting) waiter.done(false);
    } finally {
      polling = false;
    }
  };

  return {
    replica,
    usable(position) {
      if (!measured || measured.lagMs > maxLagMs) return Promise.resolve(false);
      if (position === undefined || position <= measured.replayed) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const waiter = {
          position,
          done(replayed: boolean) {
            clearTimeout(timeout);
            waiting.delete(waiter);
            resolve(replayed);
          },
        };
        const timeout = setTimeout(() => waiter.done(false), POSITION_WAIT_MS);
        waiting.add(waiter);
        if (!polling) void poll();
      });
    },
    failed() {
      measured = undefined;
    },
    lagMs: () => measured?.lagMs,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      for (const waiter of waiting) waiter.done(false);
      await checking;
      await replica.destroy();
    },
  };
}
