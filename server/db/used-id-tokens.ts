// The used_id_tokens table: each ID token an exchange accepted, by a digest of its issuer and `jti`
// (or of its signature), until its `exp`: a second exchange of the same ID token is a replay.
import type { Db } from './dialects/index.js';
import { dialectOf } from './dialects/index.js';

/** Records the ID token as used: false when it was used already (a replay). */
export function markUsed(db: Db, tokenKey: string, expiresAt: Date): Promise<boolean> {
  return dialectOf(db).insertIfAbsent(db, 'used_id_tokens', { token_key: tokenKey, expires_at: expiresAt });
}

/** Forgets ID tokens that have expired: they are refused by their `exp` now. At most `limit` a call. */
export async function forgetExpired(db: Db, now: Date, limit = 500): Promise<void> {
  const keys = await db('used_id_tokens').select('token_key').where('expires_at', '<', now).limit(limit);
  if (keys.length > 0) await db('used_id_tokens').whereIn('token_key', keys.map((k: { token_key: string }) => k.token_key)).delete();
}
