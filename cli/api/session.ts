// Which server and which token (docs/cli.md, "Credentials and configuration"): flag, then environment,
// then the config file; a stored token only ever goes to the server that issued it.
import { AppError } from '../../common/errors.js';
import type { TokenRequest, TokenResponse } from '../../common/schemas/auth.js';
import type { Role } from '../../common/schemas/users.js';
import type { ConfigStore } from '../config/store.js';
import { normalizeUrl } from '../config/url.js';
import { maskToken } from './http.js';

/** The global options that choose the server and the token: --url and --token. */
export interface ServerOptions {
  /** --url: the server (else REPOADMIN_URL, else the current login's). */
  url?: string;
  /** --token (else REPOADMIN_TOKEN). */
  token?: string;
}

/** What choosing the server and the token reads. */
export interface SessionContext {
  settings: ServerOptions;
  env: NodeJS.ProcessEnv;
  now: () => Date;
  config: ConfigStore;
  /** Where --verbose lines go. */
  log?: (line: string) => void;
}

export type TokenSource = 'flag' | 'env' | 'login' | 'config';

export interface Credentials {
  token: string;
  source: TokenSource;
  username?: string;
  userId?: string;
  /** ISO 8601, when known. */
  expiresAt?: string;
  /** The user's project (null: an administrator, who has none); known from a login, on the fly or stored. */
  projectName?: string | null;
  role?: Role;
  mustChangePassword?: boolean;
}

const NOT_LOGGED_IN_HINT = 'run repoadmin login, or set REPOADMIN_TOKEN (or REPOADMIN_USERNAME and REPOADMIN_PASSWORD)';

export async function resolveUrl(context: Pick<SessionContext, 'settings' | 'env' | 'config' | 'log'>): Promise<string> {
  if (context.settings.url) return normalizeUrl(context.settings.url, '--url', context.log);
  if (context.env.REPOADMIN_URL) return normalizeUrl(context.env.REPOADMIN_URL, 'REPOADMIN_URL', context.log);
  const current = await context.config.current();
  if (current) return current.url;
  // Never logged in, or logged out: a credentials problem (exit 4), not a usage error (cli.md, round 2).
  throw new AppError('unauthorized', 'not logged in: run repoadmin login --url URL (or give the server with --url or REPOADMIN_URL)');
}

/** What the token says about itself (not verified: the server does that). */
export function tokenClaims(token: string): { sub?: string; uid?: string; exp?: number } {
  try {
    const payload = token.split('.')[1] ?? '';
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: string; uid?: string; exp?: number };
  } catch {
    return {};
  }
}

function fromToken(token: string, source: TokenSource): Credentials {
  const claims = tokenClaims(token);
  return {
    token,
    source,
    username: claims.sub,
    userId: claims.uid,
    expiresAt: typeof claims.exp === 'number' ? new Date(claims.exp * 1000).toISOString() : undefined,
  };
}

/** A stored token past its known expiry; one without a known expiry is left to the server to judge. */
function expired(expiresAt: string | null, now: Date): boolean {
  return expiresAt !== null && Date.parse(expiresAt) <= now.getTime();
}

function envCredentials(env: NodeJS.ProcessEnv): TokenRequest | undefined {
  const { REPOADMIN_USERNAME: username, REPOADMIN_PASSWORD: password } = env;
  return username && password ? { username, password } : undefined;
}

/** A token that needs no network call: flag, environment, or a stored one that has not expired. */
export async function storedToken(context: Pick<SessionContext, 'settings' | 'env' | 'config' | 'now'>, server: string): Promise<string | undefined> {
  if (context.settings.token) return context.settings.token;
  if (context.env.REPOADMIN_TOKEN) return context.env.REPOADMIN_TOKEN;
  if (envCredentials(context.env)) return undefined;
  const stored = await context.config.get(server);
  return stored && !expired(stored.expiresAt, context.now()) ? stored.token : undefined;
}

export async function resolveCredentials(
  context: SessionContext,
  server: string,
  login: (body: TokenRequest) => Promise<TokenResponse>,
): Promise<Credentials> {
  const log = context.log ?? (() => {});
  if (context.settings.token) {
    log(`using the token of --token (${maskToken(context.settings.token)})`);
    return fromToken(context.settings.token, 'flag');
  }
  if (context.env.REPOADMIN_TOKEN) {
    log(`using the token of REPOADMIN_TOKEN (${maskToken(context.env.REPOADMIN_TOKEN)})`);
    return fromToken(context.env.REPOADMIN_TOKEN, 'env');
  }
  const fromEnv = envCredentials(context.env);
  if (fromEnv) {
    log(`logging in to ${server} as ${fromEnv.username} (REPOADMIN_USERNAME and REPOADMIN_PASSWORD)`);
    let answer: TokenResponse;
    try {
      answer = await login(fromEnv);
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthorized') {
        throw new AppError('unauthorized', `${error.message}: check REPOADMIN_USERNAME and REPOADMIN_PASSWORD`);
      }
      throw error;
    }
    return {
      token: answer.token,
      source: 'login',
      username: answer.username,
      userId: answer.userId,
      expiresAt: answer.expiresAt,
      projectName: answer.projectName,
      role: answer.role,
      mustChangePassword: answer.mustChangePassword,
    };
  }
  const stored = await context.config.get(server);
  if (!stored) throw new AppError('unauthorized', `not logged in to ${server}: ${NOT_LOGGED_IN_HINT}`);
  if (expired(stored.expiresAt, context.now())) {
    throw new AppError('unauthorized', 'your session expired: run repoadmin login');
  }
  log(`using the stored login of ${stored.username} at ${server} (${maskToken(stored.token)})`);
  return {
    token: stored.token,
    source: 'config',
    username: stored.username,
    userId: stored.userId,
    expiresAt: stored.expiresAt ?? undefined,
    projectName: stored.projectName,
    role: stored.role,
  };
}

/** A 401 says what to do next, which depends on where the token came from. */
export function whyRejected(error: unknown, creds: Credentials, server: string): unknown {
  // With a reason the token was accepted: the server's message says what else is missing.
  if (!(error instanceof AppError) || error.code !== 'unauthorized' || error.details.reason) return error;
  const next: Record<TokenSource, string> = {
    flag: 'check --token',
    env: 'check REPOADMIN_TOKEN',
    login: 'check REPOADMIN_USERNAME and REPOADMIN_PASSWORD',
    config: 'run repoadmin login',
  };
  const what = creds.source === 'config' ? `your session on ${server} is no longer valid` : `${server} rejected the token`;
  return new AppError('unauthorized', `${what} (${error.message}): ${next[creds.source]}`);
}
