// generate-token with brute-force limiting, and turning a bearer token into the acting user.
import net from 'node:net';
import { AppError } from '../../common/errors.js';
import { formatTimestamp } from '../../common/dates.js';
import type { TokenRequest, TokenResponse } from '../../common/schemas/auth.js';
import { FIRST_PASSWORD } from '../../common/schemas/users.js';
import { issueToken, verifyToken } from '../auth/tokens.js';
import { clearFailures, forgetOldAttempts, giveBackAttempt, takeAttempt } from '../db/login-attempts.js';
import { type UserRow, findUserById, findUserByName } from '../db/users.js';
import type { Actor, Services } from './context.js';

export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_FAILURES_PER_USER = 10;
export const MAX_FAILURES_PER_ADDRESS = 100;

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether a client address is this machine's loopback (IPv4, IPv4 mapped into IPv6, or IPv6). */
export function isLoopback(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return LOOPBACK.check(mapped, 'ipv4');
  const family = net.isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export async function generateToken(services: Services, request: TokenRequest, address: string): Promise<TokenResponse> {
  const user = await verifyLogin(services, request, address);
  const { token, expiresAt } = issueToken(services.tokens, user, services.now());
  return {
    token,
    userId: user.userId,
    expiresAt: formatTimestamp(expiresAt),
    username: user.username,
    role: user.role,
    projectName: user.projectName,
    mustChangePassword: user.mustChangePassword,
  };
}

/**
 * Checks a user name and password as a login does, within the login limits
 * (docs/api.md, "Logins and their limits"): the user, or a 401 (wrong), 429 (too many failures) or
 * 403 (the documented first password from another machine). For generate-token, and for making a
 * project token with the password.
 */
export async function verifyLogin(services: Services, request: TokenRequest, address: string): Promise<UserRow> {
  const nowSeconds = Math.floor(services.now().getTime() / 1000);
  const window = Math.floor(nowSeconds / LOGIN_WINDOW_SECONDS) * LOGIN_WINDOW_SECONDS;
  const byName = { scope: 'user' as const, subject: request.username };
  const byAddress = { scope: 'address' as const, subject: address };
  const refuse = () => {
    const retryAfter = window + LOGIN_WINDOW_SECONDS - nowSeconds;
    return new AppError('rate_limited', `too many failed logins: try again in ${retryAfter} seconds`, { retryAfter });
  };
  // Each attempt is counted as a failure until its password proves right; refused ones do not count.
  if (!(await takeUserAttempt(services, window, byName))) throw refuse();
  return whileUnsettled(services, request.username, async () => {
    if (!(await takeAttempt(services.db, window, byAddress, MAX_FAILURES_PER_ADDRESS))) {
      await giveBackAttempt(services.db, window, byName);
      throw refuse();
    }
    const found = await findUserByName(services.db, request.username);
    const ok = await services.passwords.verify(request.password, found?.passwordHash);
    if (!ok || !found) {
      await forgetOldAttempts(services.db, window);
      throw new AppError('unauthorized', 'wrong user name or password');
    }
    await clearFailures(services.db, 'user', request.username);
    await giveBackAttempt(services.db, window, byAddress);
    // Until it is changed, anyone who can reach the port knows the documented first password.
    if (request.password === FIRST_PASSWORD && !isLoopback(address)) {
      throw new AppError(
        'forbidden',
        `the documented first password is accepted only from this server's own machine (loopback); log in there and change it, or start the server with REPO_MAN_ADMIN_PASSWORD (or REPO_MAN_ADMIN_PASSWORD_FILE) set`,
      );
    }
    return found;
  });
}

/** Logins of this process counted and not yet settled, per database and user name. */
const unsettled = new WeakMap<object, Map<string, Set<Promise<unknown>>>>();

/** Runs the rest of a counted login, known to takeUserAttempt as unsettled until it ends either way. */
async function whileUnsettled<T>(services: Services, username: string, work: () => Promise<T>): Promise<T> {
  let byName = unsettled.get(services.db);
  if (!byName) unsettled.set(services.db, (byName = new Map()));
  let pending = byName.get(username);
  if (!pending) byName.set(username, (pending = new Set()));
  const running = work();
  const settled = running.catch(() => undefined);
  pending.add(settled);
  try {
    return await running;
  } finally {
    pending.delete(settled);
    if (pending.size === 0) byName.delete(username);
  }
}

/**
 * Counts an attempt for the user name. When the count is full while logins of this process are
 * still being checked (each holds a place until its password proves right), it waits for those and
 * tries again: parallel pipeline steps logging in as one user all get in, where only failures refuse.
 */
async function takeUserAttempt(services: Services, window: number, byName: { scope: 'user'; subject: string }): Promise<boolean> {
  for (let round = 0; ; round++) {
    if (await takeAttempt(services.db, window, byName, MAX_FAILURES_PER_USER)) return true;
    const pending = unsettled.get(services.db)?.get(byName.subject);
    if (!pending?.size || round === 3) return false;
    await Promise.all([...pending]);
  }
}

/** The user of a bearer token; any problem is a 401, never a 500. */
export async function actorFromToken(services: Services, token: string): Promise<Actor> {
  const claims = verifyToken(services.tokens, token);
  const actor = await actorFromSession(services, { userId: claims.uid, username: claims.sub, tokenVersion: claims.tv });
  return { ...actor, sessionIssuedAt: new Date(claims.iat * 1000) };
}

/** The user of a session token whose signature was checked. */
export async function actorFromSession(services: Services, claims: { userId: string; username: string; tokenVersion: number }): Promise<Actor> {
  const user = await findUserById(services.db, claims.userId);
  if (!user || user.username !== claims.username) throw new AppError('unauthorized', 'the token belongs to a user that no longer exists');
  if (user.tokenVersion !== claims.tokenVersion) {
    throw new AppError('unauthorized', 'the token was revoked (the password changed since): get a new one');
  }
  return {
    userId: user.userId,
    username: user.username,
    role: user.role,
    projectName: user.projectName,
    mustChangePassword: user.mustChangePassword,
  };
}
