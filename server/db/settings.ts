// Server-wide settings kept in the database, so several instances agree (the JWT secret).
import type { Db } from './dialects/index.js';

/** Stores `value` under `key` unless a value is there already; returns the stored value. */
export async function getOrCreateSetting(db: Db, key: string, value: string): Promise<string> {
  await db('settings').insert({ key, value }).onConflict('key').ignore();
  const row = await db('settings').select('value').where({ key }).first();
  return String(row.value);
}
