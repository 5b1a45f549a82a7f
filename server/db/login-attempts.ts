// Failed generate-token attempts per user name and per client address, in fixed windows.
import type { Knex } from 'knex';
import { toNumber } from './rows.js';

export type AttemptScope = 'user' | 'address';

export async function failuresInWindow(
  db: Knex,
  window: number,
  subjects: { scope: AttemptScope; subject: string }[],
): Promise<Record<AttemptScope, number>> {
  const counts: Record<AttemptScope, number> = { user: 0, address: 0 };
  const rows = await db('login_attempts')
    .select('scope', 'failures')
    .where({ window_start: window })
    .andWhere((q) => {
      for (const s of subjects) q.orWhere({ scope: s.scope, subject: s.subject });
    });
  for (const row of rows) counts[row.scope as AttemptScope] = toNumber(row.failures);
  return counts;
}

export async function recordFailure(
  db: Knex,
  window: number,
  subjects: { scope: AttemptScope; subject: string }[],
): Promise<void> {
  await db('login_attempts')
    .insert(subjects.map((s) => ({ ...s, window_start: window, failures: 1 })))
    .onConflict(['scope', 'subject', 'window_start'])
    .merge({ failures: db.raw('login_attempts.failures + 1') });
  // Older windows no longer count.
  await db('login_attempts').where('window_start', '<', window).delete();
}

export async function clearFailures(db: Knex, scope: AttemptScope, subject: string): Promise<void> {
  await db('login_attempts').where({ scope, subject }).delete();
}
