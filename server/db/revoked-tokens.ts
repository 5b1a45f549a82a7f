// The revoked_tokens table: the hashes of project tokens that no longer work, and why, so that a
// pipeline still sending one is told "revoked" or "its user was deleted" instead of "unknown".
import type { Db } from './dialects/index.js';
import { toDate } from './rows.js';

export type RevokeReason = 'revoked' | 'user_deleted';

export async function rememberRevoked(db: Db, tokenHashes: string[], reason: RevokeReason, at: Date): Promise<void> {
  if (tokenHashes.length === 0) return;
  await db('revoked_tokens').insert(tokenHashes.map((hash) => ({ token_hash: hash, reason, revoked_at: at })));
}

export async function findRevoked(db: Db, tokenHash: string): Promise<{ reason: RevokeReason; revokedAt: Date } | undefined> {
  const row = await db('revoked_tokens').select('reason', 'revoked_at').where({ token_hash: tokenHash }).first();
  if (!row) return undefined;
  return { reason: row.reason as RevokeReason, revokedAt: toDate(row.revoked_at) };
}
