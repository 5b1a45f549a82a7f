// Login attempts per user name and per client address, in fixed windows. An attempt takes its place
// in the count before the password is compared, in one statement, so that concurrent attempts
// cannot all pass the limit while each one's comparison is still running.
import type { Knex } from 'knex';
import { type Db, dialectOf } from './dialects/index.js';
import { retryConflicts } from './faults.js';

export type AttemptScope = 'user' | 'address';

export interface AttemptSubject {
  scope: AttemptScope;
  subject: string;
}

/**
 * Counts one attempt for the subject unless it already has `limit` in this window: true when counted.
 * Not in a transaction: a conflict is retried, and a failed statement would end the caller's transaction.
 */
export function takeAttempt(db: Knex, window: number, s: AttemptSubject, limit: number): Promise<boolean> {
  const key = { scope: s.scope, subject: s.subject, window_start: window };
  return retryConflicts(() => dialectOf(db).countUpTo(db, 'login_attempts', key, 'failures', limit));
}

/** Takes back an attempt counted by `takeAttempt`: it was refused or it succeeded. */
export async function giveBackAttempt(db: Db, window: number, s: AttemptSubject): Promise<void> {
  await db('login_attempts')
    .where({ scope: s.scope, subject: s.subject, window_start: window })
    .where('failures', '>', 0)
    .update({ failures: db.raw('failures - 1') });
}

/** Forgets the attempts of older windows: they no longer count. */
export async function forgetOldAttempts(db: Db, window: number): Promise<void> {
  await db('login_attempts').where('window_start', '<', window).delete();
}

export async function clearFailures(db: Db, scope: AttemptScope, subject: string): Promise<void> {
  await db('login_attempts').where({ scope, subject }).delete();
}
