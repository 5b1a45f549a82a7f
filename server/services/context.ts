// What the services need from the running server.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { TokenScope } from '../../common/schemas/tokens.js';
import type { Role } from '../../common/schemas/users.js';
import type { Passwords } from '../auth/passwords.js';
import type { TokenSettings } from '../auth/tokens.js';
import type { ServerConfig } from '../config.js';
import type { Metrics } from '../metrics.js';

export interface Services {
  db: Knex;
  config: ServerConfig;
  log: Logger;
  passwords: Passwords;
  tokens: TokenSettings;
  now: () => Date;
  /** The Prometheus metrics, unless REPO_MAN_METRICS=false. */
  metrics?: Metrics;
}

/** The user behind a request's token, as the database has it now. */
export interface Actor {
  userId: string;
  username: string;
  role: Role;
  projectName: string | null;
  mustChangePassword: boolean;
  /** Set when the request came with a project token (absent for a session token). */
  projectToken?: { id: string; name: string; scope: TokenScope };
}
