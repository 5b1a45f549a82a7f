// What a database failure means for a request: unavailable (503), worth retrying (deadlocks), or a
// bug (500). docs/operations.md lists the failures this was tested against.

import { classifyDriverError as classify } from './dialects/errors.js';

/**
 * The database cannot serve us now: unreachable, refusing, not answering, or still colliding
 * after the retries of `retryConflicts` (503, not 500).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const kind = classify(error);
  return kind === 'unavailable' || kind === 'retry';
}

/**
 * What a log line of work outside a request says of its failure: a database that did not answer by
 * its code alone (an outage is no bug: no stack, and never the SQL the driver puts in its message;
 * the request path logs an outage once, server/db/outage.ts), anything else in full.
 */
export function failureFields(error: unknown): Record<string, unknown> {
  if (isDatabaseUnavailable(error)) return { code: (error as { code?: unknown } | undefined)?.code ?? 'unavailable', database: 'unavailable' };
  return { err: error };
}

/** A deadlock, a serialization failure or a lock wait timeout: the transaction may simply run again. */
export function isRetryable(error: unknown): boolean {
  return classify(error) === 'retry';
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
