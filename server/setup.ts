// What a database needs before the app can serve from it: schema, first administrator, JWT secret.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Passwords } from './auth/passwords.js';
import type { ServerConfig } from './config.js';
import { migrateLatest } from './db/connect.js';
import { getOrCreateSetting } from './db/settings.js';
import { ensureDefaultAdmin } from './services/users.js';

export interface Prepared {
  secret: string;
  /** True when the first administrator was created now with the documented password. */
  adminMustChangePassword: boolean;
}

export async function prepareDatabase(db: Knex, config: ServerConfig, passwords: Passwords): Promise<Prepared> {
  await migrateLatest(db);
  const secret = config.jwt.secret ?? (await getOrCreateSetting(db, 'jwt_secret', randomBytes(32).toString('base64url')));
  const admin = await ensureDefaultAdmin({ db, config, passwords });
  return { secret, adminMustChangePassword: admin.mustChangePassword };
}
