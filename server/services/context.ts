// What the services need from the running server.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { TokenScope } from '../../common/schemas/tokens.js';
import type { Role } from '../../common/schemas/users.js';
import type { Passwords } from '../auth/passwords.js';
import type { TokenSettings } from '../auth/tokens.js';
import type { ServerConfig } from '../config.js';
import type { ReadRouting } from '../db/replica.js';
import type { OidcBinding } from '../db/tokens.js';
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
  /** The read replica, when one is configured (server/db/replica.ts); read endpoints use it. */
  reads?: ReadRouting;
  /** The process's webhook outbox (services/outbox.ts): a feed wakes it when events wait for their number. */
  outbox?: { wake(): void };
  /** Takes the audit entry of a request to an endpoint declared with `audit`; must not throw. */
  audit?: (record: AuditRecord) => void;
}

/** The user behind a request's token, as the database has it now. */
export interface Actor {
  userId: string;
  username: string;
  role: Role;
  projectName: string | null;
  mustChangePassword: boolean;
  /** When the request's session token was issued (its `iat`); absent for a project token. */
  sessionIssuedAt?: Date;
  /** Set when the request came with a project token (absent for a session token). */
  projectToken?: {
    id: string;
    name: string;
    scope: TokenScope;
    /**
     * Set on a token exchanged through a trusted publisher that lists environments: it may promote
     * into exactly these (protected ones included), whatever its scope. Undefined on every other
     * token, which never promotes into a protected environment (policy/access.ts, checkPromote).
     */
    promoteEnvironments?: string[];
    /** Set for a token made by an ID token exchange: what a publish through it is bound to. */
    oidc?: OidcBinding;
  };
}

/** What the audit log is told of a request to an endpoint declared with `audit`. */
export interface AuditRecord {
  action: string;
  actor: Actor | undefined;
  /** The checked credential, where the handler's statement resolved it (publishing) and `actor` is unset. */
  credential: SignedCredential | undefined;
  /** How the caller proved who it is. */
  via: 'password' | 'session' | 'token' | undefined;
  target: string | undefined;
  outcome: 'ok' | 'denied' | 'failed';
  address: string;
  requestId: string;
  details: Record<string, unknown> | undefined;
}

/**
 * A bearer token whose signature (session) or form (project) has been checked, but not what the
 * database knows of it: its user, version, scope, expiry and project.
 */
export type SignedCredential =
  | { kind: 'session'; userId: string; username: string; tokenVersion: number }
  | { kind: 'project'; tokenHash: string };
