// Which server and which token (docs/cli.md, "Credentials and configuration"): flag, then environment,
// then the config file, then an ID token the CI offers, exchanged for a short-lived project token
// (trusted publishing); a stored token only ever goes to the server that issued it.
import { AppError } from '../../common/errors.js';
import type { TokenRequest, TokenResponse } from '../../common/schemas/auth.js';
import type { OidcExchanged, OidcExchangeRequest } from '../../common/schemas/trust.js';
import type { Role } from '../../common/schemas/users.js';
import type { ConfigStore } from '../config/store.js';
import { normalizeUrl } from '../config/url.js';
import { maskToken } from '../http.js';
import { describeSource, idTokenSource, type IdTokenSource } from './id-token.js';

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

/** `oidc`: a short-lived project token made from the CI's ID token, kept in memory only. */
export type TokenSource = 'flag' | 'env' | 'login' | 'config' | 'oidc';

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
  /** `oidc`: the trusted publisher that matched the ID token. */
  publisherId?: string;
  /** `oidc`: the branch the token may publish to (null: a tag build, any branch its publisher allows). */
  branch?: string | null;
}

/** What choosing the token may ask of the server, and of the CI. */
export interface SessionCalls {
  /** `POST /v1/authentication/generate-token`. */
  login(body: TokenRequest): Promise<TokenResponse>;
  /** The server's audience (`GET /v1/authentication/oidc/audience`). */
  audience(): Promise<string>;
  /** `POST /v1/authentication/oidc`. */
  exchange(body: OidcExchangeRequest): Promise<OidcExchanged>;
  /** GitHub Actions' ID token for this audience. */
  githubIdToken(source: Extract<IdTokenSource, { kind: 'github' }>, audience: string): Promise<string>;
}

/** What the first call that needs a token knows: the project it is for (a publish's). */
export interface CredentialsHint {
  projectName?: string;
}

const NOT_LOGGED_IN_HINT =
  'run repoadmin login, or set REPOADMIN_TOKEN (or REPOADMIN_USERNAME and REPOADMIN_PASSWORD; in a pipeline, REPOADMIN_ID_TOKEN or GitHub Actions\' id-token permission)';

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
  calls: SessionCalls,
  hint: CredentialsHint = {},
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
      answer = await calls.login(fromEnv);
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
  const ci = idTokenSource(context.env);
  if (ci && (!stored || expired(stored.expiresAt, context.now()))) return exchanged(context, server, calls, ci, hint);
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

/**
 * Trusted publishing: the CI's ID token exchanged for a project token of minutes, which is kept in
 * this process only. A refusal says what the server said (which claim differed) and exits 4.
 */
async function exchanged(context: SessionContext, server: string, calls: SessionCalls, ci: IdTokenSource, hint: CredentialsHint): Promise<Credentials> {
  const log = context.log ?? (() => {});
  const from = describeSource(ci);
  let idToken: string;
  if (ci.kind === 'github') {
    const audience = await calls.audience();
    log(`asking GitHub Actions for an ID token with audience ${audience}`);
    idToken = await calls.githubIdToken(ci, audience);
  } else {
    idToken = ci.token;
  }
  log(`exchanging the ID token of ${from} (${maskToken(idToken)}) at ${server}`);
  let answer: OidcExchanged;
  try {
    answer = await calls.exchange({ token: idToken, projectName: hint.projectName });
  } catch (error) {
    throw refusedExchange(error, from);
  }
  log(
    `trusted publisher ${answer.publisherId} matched: a token for project ${answer.projectName}, ` +
      `${answer.branch === null ? 'a tag build' : `branch ${answer.branch}`}, scopes ${answer.scopes.join(',')}, until ${answer.expiresAt} (kept in memory only)`,
  );
  return {
    token: answer.token,
    source: 'oidc',
    expiresAt: answer.expiresAt,
    projectName: answer.projectName,
    publisherId: answer.publisherId,
    branch: answer.branch,
  };
}

/** The server's refusal of an exchange, as a credentials problem (exit 4) that names where the ID token came from. */
function refusedExchange(error: unknown, from: string): unknown {
  if (!(error instanceof AppError)) return error;
  if (error.code === 'unauthorized' || error.code === 'forbidden') {
    return new AppError(error.code, `the ID token of ${from} was refused: ${error.message}`, { reason: error.details.reason });
  }
  // Publishers of several projects matched: the run must say which project it publishes to.
  if (error.code === 'conflict') return new AppError('forbidden', `the ID token of ${from} was refused: ${error.message} (publish with --project)`);
  return error;
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
    oidc: 'the short-lived token made from the ID token expired or was revoked; run the step again',
  };
  const what = creds.source === 'config' ? `your session on ${server} is no longer valid` : `${server} rejected the token`;
  return new AppError('unauthorized', `${what} (${error.message}): ${next[creds.source]}`);
}
