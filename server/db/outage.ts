// A database outage is logged twice, not once per failed request: when it starts (with the first
// error, without a stack) and when the database answers again (with how long it lasted and how many
// requests were answered 503 meanwhile). Only failing requests and a probe during the outage pay.
import type { Knex } from 'knex';
import type { Logger } from 'pino';

/** How often the database is asked for `select 1` while it is out. */
const PROBE_EVERY_MS = 1_000;

export interface Outages {
  /** A request was answered 503 because of `error`. */
  failed(error: unknown): void;
}

function reason(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  // knex puts the statement before the driver's message: the message is what says why.
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]!.split(' - ').at(-1)! : String(error);
  return typeof e?.code === 'string' ? `${e.code}: ${message}` : message;
}

export function trackOutages(db: Knex, log: Logger): Outages {
  let outage: { since: number; failed: number } | undefined;

  const probe = async () => {
    // A database closed on purpose (the server is stopping) has no pool left: nothing to wait for.
    if (!(db.client as { pool?: unknown }).pool) return;
    try {
      await db.raw('select 1');
    } catch {
      setTimeout(probe, PROBE_EVERY_MS).unref();
      return;
    }
    const { since, failed } = outage!;
    outage = undefined;
    log.warn({ outageMs: Date.now() - since, failedRequests: failed }, 'database available again');
  };

  return {
    failed(error) {
      if (outage) {
        outage.failed++;
        return;
      }
      outage = { since: Date.now(), failed: 1 };
      log.error({ reason: reason(error) }, 'database unavailable: answering 503 until it answers again');
      setTimeout(probe, PROBE_EVERY_MS).unref();
    },
  };
}
