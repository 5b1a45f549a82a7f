// What a database failure means for a request: unavailable (503), worth retrying (deadlocks), or a
// bug (500). docs/operations.md lists the failures this was tested against.

/**
 * SQLSTATE codes (PostgreSQL, appendix A) of a database that cannot serve us now: connection
 * exceptions (08), insufficient resources (53: too many clients, disk full, out of memory),
 * operator intervention (57: shutdowns, a statement cancelled by statement_timeout), refused
 * logins (28), a database that does not exist (3D000) or does not accept connections (55000
 * "not currently accepting connections"), a lock not available in time (55P03), and the
 * concurrency failures that were retried and failed again (40001, 40P01).
 */
const UNAVAILABLE_STATES = /^(08|53|57|28)|^(3D000|55000|55P03|40001|40P01)$/;

/** Socket errors on the way to the database. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Messages of the drivers and the pool without a code: pg ("timeout expired" when connecting takes
 * longer than connectionTimeoutMillis, "Connection terminated ..."), knex ("Unable to acquire a
 * connection" once destroyed) and PGlite once closed. knex puts the statement before the driver's
 * message, with " - " between.
 */
const UNAVAILABLE_MESSAGES =
  /(^| - )timeout expired$|Connection terminated|Client was closed|Client has encountered a connection error|Unable to acquire a connection|PGlite is closed/i;

/** The code of our own client-side statement timeout. */
export const CLIENT_TIMEOUT = 'REPOADMIN_DB_TIMEOUT';

export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown; message?: unknown } | null | undefined;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'KnexTimeoutError') return true;
  if (typeof e.code === 'string') {
    if (e.code === CLIENT_TIMEOUT || NETWORK_CODES.has(e.code)) return true;
    if (/^[0-9A-Z]{5}$/.test(e.code)) return UNAVAILABLE_STATES.test(e.code);
  }
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message);
}

/** A deadlock (40P01) or a serialization failure (40001): the transaction may simply run again. */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return code === '40P01' || code === '40001';
}

const RETRIES = 5;

/**
 * Runs `work` again when it fails with a deadlock or a serialization failure, up to five times,
 * after a random pause that grows with each attempt (so that the transactions that collided do not
 * collide again).
 */
export async function retryConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt > RETRIES || !isRetryable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}

/** `promise`, or a rejection with `error` after `ms` (the promise is left to settle on its own). */
export function within<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(error()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (reason: unknown) => {
        clearTimeout(timer);
        reject(reason);
      },
    );
  });
}
