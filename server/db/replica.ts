// A PostgreSQL read replica (docs/operations.md, "Read replicas"): how far behind it is, checked
// once a second, and whether a read may go there now; a read after a client's write runs on a
// replica connection that has replayed that write, waiting briefly for it (read-your-writes by WAL
// position). PostgreSQL only: WAL positions and replay are its.
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
 * `read` shared by its callers, each getting the answer of a read sent after its call: a call while
 * none is under way sends one; calls while one is under way wait for it to end and share the next.
 * Under load a batch of callers costs one read, as the audit writer's entries share an insert; alone,
 * a call costs one read. (A batching library such as DataLoader batches the calls of one tick and
 * keeps each key's answer: a kept answer may be a position read before the caller's commit.)
 */
export function sharedAfterCall<T>(read: () => Promise<T>): () => Promise<T> {
  let underWay: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const send = () => {
    const sent = read();
    underWay = sent;
    const ended = () => {
      if (underWay === sent) underWay = undefined;
    };
    sent.then(ended, ended);
    return sent;
  };
  return () => {
    if (underWay === undefined) return send();
    next ??= underWay.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      next = undefined;
      return send();
    });
    return next;
  };
}

const positionReads = new WeakMap<Knex, () => Promise<string>>();

/**
 * The primary's WAL position after every write committed before the call (`currentPosition`, its
 * statement shared by the writes that answer together: sharedAfterCall).
 */
export function positionAfterCommit(db: Knex): Promise<string> {
  let read = positionReads.get(db);
  if (read === undefined) positionReads.set(db, (read = sharedAfterCall(() => currentPosition(db))));
  return read();
}

/**
 * How far the read endpoint has replayed. A server that is not replaying (a replica promoted
 * since, reached through the replicas' address) has what it wrote: its own position.
 */
const REPLAYED = 'coalesce(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text';

export interface ReadRouting {
  /** The replica's pool. */
  replica: Knex;
  /** Whether reads may go to the replica now: it answered the last check and was at most the allowed lag behind. */
  usable(): boolean;
  /**
   * Runs `read` on a replica connection that has replayed `position` (a client's last write),
   * waiting up to POSITION_WAIT_MS for it on that connection; undefined when it did not get there.
   */
  readAt<T>(position: bigint, read: (db: Knex.Transaction) => Promise<T>): Promise<{ value: T } | undefined>;
  /** A read failed on the replica: it is skipped until a check finds it well again. */
  failed(): void;
  /** How far behind the replica was at the last check, in milliseconds; undefined when it did not answer. */
  lagMs(): number | undefined;
  stop(): Promise<void>;
}

export function startReadRouting(primary: Knex, replica: Knex, maxLagMs: number, log: Logger): ReadRouting {
  let measured: { lagMs: number } | undefined;
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
      measured = { lagMs };
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

  return {
    replica,
    usable: () => measured !== undefined && measured.lagMs <= maxLagMs,
    async readAt(position, read) {
      // On the connection the read will use: the replicas behind one address (HAProxy's replicas
      // port) are several servers, each connection reaching one of them, each at its own position.
      return replica.transaction(async (trx) => {
        const deadline = Date.now() + POSITION_WAIT_MS;
        for (;;) {
          const result = (await trx.raw(`select ${REPLAYED} as replayed`)) as { rows: { replayed: string }[] };
          if ((parsePosition(result.rows[0]!.replayed) ?? 0n) >= position) return { value: await read(trx) };
          if (Date.now() >= deadline || stopped) return undefined;
          await new Promise((resolve) => setTimeout(resolve, POSITION_POLL_MS));
        }
      });
    },
    failed() {
      measured = undefined;
    },
    lagMs: () => measured?.lagMs,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await checking;
      await replica.destroy();
    },
  };
}
