// Project tokens: made, listed and revoked by their user or an administrator, and turned into the
// acting user on each request that sends one.
import { pageInfo } from '../../common/schemas/common.js';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import { formatTimestamp } from '../../common/dates.js';
import {
  FRESH_LOGIN_SECONDS,
  TOKEN_MAX_ACTIVE,
  TOKEN_MAX_LIFETIME_YEARS,
  type ProjectToken,
  type ProjectTokenCreateRequest,
  type ProjectTokenCreated,
  type ProjectTokenList,
  type ProjectTokenListQuery,
} from '../../common/schemas/tokens.js';
import { hashProjectToken, newProjectToken } from '../auth/project-tokens.js';
import { retryConflicts } from '../db/faults.js';
import { findRevoked, rememberRevoked } from '../db/revoked-tokens.js';
import {
  type TokenRow,
  countActiveTokens,
  deleteToken,
  deleteTokensOfUser,
  findTokenByHash,
  findTokenById,
  insertToken,
  listTokens,
  lockTokenHashesOfUser,
  touchToken,
} from '../db/tokens.js';
import { sameUserId } from '../../common/schemas/users.js';
import { findUserById, lockUser } from '../db/users.js';
import { verifyLogin } from './auth.js';
import type { Actor, Services } from './context.js';

/** `lastUsedAt` is written at most this often per token: a busy pipeline does not write on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** A token whose last recorded use is at or before this is due to have its use recorded again. */
export const lastUseDueBefore = (now: Date) => new Date(now.getTime() - LAST_USED_RESOLUTION_MS);

function toProjectToken(row: TokenRow): ProjectToken {
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    userId: row.userId,
    username: row.username,
    projectName: row.projectName,
    createdAt: formatTimestamp(row.createdAt),
    expiresAt: row.expiresAt ? formatTimestamp(row.expiresAt) : null,
    lastUsedAt: row.lastUsedAt ? formatTimestamp(row.lastUsedAt) : null,
    kind: row.kind,
    branch: row.branch,
    publisherId: row.publisherId,
  };
}


function checkExpiry(expiresAt: Date | null | undefined, now: Date): Date | null {
  if (!expiresAt) return null;
  const latest = new Date(now);
  latest.setUTCFullYear(latest.getUTCFullYear() + TOKEN_MAX_LIFETIME_YEARS);
  const problem =
    expiresAt.getTime() <= now.getTime()
      ? 'must be in the future'
      : expiresAt.getTime() > latest.getTime()
        ? `at most ${TOKEN_MAX_LIFETIME_YEARS} years from now`
        : undefined;
  if (problem) throw new AppError('validation', `expiresAt: ${problem}`, { errors: [{ path: 'expiresAt', message: problem }] });
  return expiresAt;
}

/**
 * Making a project token needs a fresh login (docs/api.md, "POST /v1/tokens"): a session token
 * issued in the last FRESH_LOGIN_SECONDS, or the caller's password, checked as a login is (the same
 * limits count it). A stolen older session cannot mint long-lived credentials. Says which it was.
 */
async function confirmFreshLogin(services: Services, actor: Actor, password: string | undefined, address: string): Promise<'session' | 'password'> {
  if (password !== undefined) {
    let user;
    try {
      user = await verifyLogin(services, { username: actor.username, password }, address);
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthorized') {
        throw new AppError('unauthorized', `wrong password for ${actor.username}: no project token was made`, { reason: 'fresh_login_required' });
      }
      throw error;
    }
    // The name was given to another user since the session was checked (deleted and made again).
    if (!sameUserId(user.userId, actor.userId)) throw new AppError('unauthorized', 'the token belongs to a user that no longer exists');
    return 'password';
  }
  const age = actor.sessionIssuedAt ? services.now().getTime() - actor.sessionIssuedAt.getTime() : Number.NaN;
  if (age <= FRESH_LOGIN_SECONDS * 1000) return 'session';
  throw new AppError(
    'unauthorized',
    `making a project token needs a fresh login: this session token is more than ${FRESH_LOGIN_SECONDS / 60} minutes old. Log in again (repoadmin login), or send your password in the request's "password" field`,
    { reason: 'fresh_login_required' },
  );
}

/** Makes a project token for `userId` (the caller, or the user an administrator named). */
export async function createProjectToken(
  services: Services,
  actor: Actor,
  userId: string,
  request: ProjectTokenCreateRequest,
  address: string,
): Promise<{ created: ProjectTokenCreated; freshLogin: 'session' | 'password' }> {
  const now = services.now();
  const expiresAt = checkExpiry(request.expiresAt, now);
  const freshLogin = await confirmFreshLogin(services, actor, request.password, address);
  const token = newProjectToken();
  const id = randomUUID();
  // The user's row is locked while its tokens are counted, so that tokens made at the same time
  // take turns and cannot pass the limit together (a deletion of the user takes the same lock first).
  const user = await retryConflicts(() =>
    services.db.transaction(async (trx) => {
      const owner = await lockUser(trx, userId);
      if (!owner) throw new AppError('not_found', `no user with id ${userId}`);
      if ((await countActiveTokens(trx, userId, now)) >= TOKEN_MAX_ACTIVE) {
        throw new AppError(
          'conflict',
          `user ${owner.username} has ${TOKEN_MAX_ACTIVE} active project tokens, the most a user may have: revoke one first (repoadmin token list, repoadmin token revoke)`,
        );
      }
      await insertToken(trx, { id, userId, name: request.name, scope: request.scope, tokenHash: hashProjectToken(token), createdAt: now, expiresAt });
      return owner;
    }),
  );
  const created = {
    id,
    name: request.name,
    scope: request.scope,
    token,
    userId,
    username: user.username,
    projectName: user.projectName,
    createdAt: formatTimestamp(now),
    expiresAt: expiresAt ? formatTimestamp(expiresAt) : null,
  };
  return { created, freshLogin };
}

/** A page of the tokens of `owner` (undefined: everyone's). */
export async function listProjectTokens(services: Services, actor: Actor, owner: string | undefined, query: ProjectTokenListQuery): Promise<ProjectTokenList> {
  if (owner !== undefined && !sameUserId(owner, actor.userId) && !(await findUserById(services.db, owner))) throw new AppError('not_found', `no user with id ${owner}`);
  const { items, total } = await listTokens(services.db, { userId: owner }, query);
  return {
    tokens: items.map(toProjectToken),
    page: pageInfo(total, query, items.length),
  };
}

/** Whose a token is, as the revoke's access rule judges it; a token that is not there is not found. */
export async function tokenOf(services: Services, id: string): Promise<{ userId: string }> {
  const token = await findTokenById(services.db, id);
  if (!token) throw new AppError('not_found', `no token with id ${id}`);
  return { userId: token.userId };
}

/** Revokes a token. */
export async function revokeProjectToken(services: Services, id: string): Promise<void> {
  await retryConflicts(() =>
    services.db.transaction(async (trx) => {
      const token = await findTokenById(trx, id);
      if (!token) throw new AppError('not_found', `no token with id ${id}`);
      // Gone by now when its user was deleted meanwhile, which remembered it.
      const hash = await deleteToken(trx, id);
      if (hash) await rememberRevoked(trx, [hash], 'revoked', services.now());
    }),
  );
}

/**
 * Revokes every token of a user (the caller's own, or anyone's for an administrator), as after a
 * leaked password: the user's row is locked first, then its tokens, as a deletion of the user takes
 * them. Returns how many were revoked.
 */
export async function revokeAllProjectTokens(services: Services, owner: string): Promise<number> {
  return retryConflicts(() =>
    services.db.transaction(async (trx) => {
      if (!(await lockUser(trx, owner))) throw new AppError('not_found', `no user with id ${owner}`);
      const hashes = await lockTokenHashesOfUser(trx, owner);
      await deleteTokensOfUser(trx, owner);
      await rememberRevoked(trx, hashes, 'revoked', services.now());
      return hashes.length;
    }),
  );
}

/**
 * Before a user is deleted (its tokens go with it, by the foreign key): remembers why they stop
 * working. The user's row is locked first (lockUser), then its tokens, the order a revocation
 * takes them in too, so every token is remembered once, by one of the two.
 */
export async function retireTokensOfUser(trx: Knex.Transaction, userId: string, now: Date): Promise<void> {
  await rememberRevoked(trx, await lockTokenHashesOfUser(trx, userId), 'user_deleted', now);
}

/** The user a project token acts as, within its scope; any problem is a 401 that says which. */
export function actorFromProjectToken(services: Services, token: string): Promise<Actor> {
  return actorFromProjectTokenHash(services, hashProjectToken(token));
}

/** The same for the token's hash, as the tokens table keeps it. */
export async function actorFromProjectTokenHash(services: Services, hash: string): Promise<Actor> {
  const found = await findTokenByHash(services.db, hash);
  if (!found) {
    const revoked = await findRevoked(services.db, hash);
    if (revoked?.reason === 'user_deleted') {
      throw new AppError('unauthorized', 'the project token belonged to a user that was deleted: ask an administrator for a new one');
    }
    if (revoked) throw new AppError('unauthorized', `the project token was revoked at ${formatTimestamp(revoked.revokedAt)}: make a new one`);
    throw new AppError('unauthorized', 'the project token is not known to this server (never made here, or mistyped)');
  }
  const now = services.now();
  if (found.expiresAt && found.expiresAt.getTime() <= now.getTime()) {
    throw new AppError('unauthorized', `the project token "${found.name}" expired at ${formatTimestamp(found.expiresAt)}: make a new one`);
  }
  // The statement checks the same bound again, so two requests at once write the use once.
  const dueBefore = lastUseDueBefore(now);
  if (!found.lastUsedAt || found.lastUsedAt.getTime() <= dueBefore.getTime()) await touchToken(services.db, { id: found.id }, now, dueBefore);
  return {
    userId: found.userId,
    username: found.username,
    role: found.role,
    projectName: found.projectName,
    mustChangePassword: found.mustChangePassword,
    projectToken: {
      id: found.id,
      name: found.name,
      scope: found.scope,
      ...(found.oidc ? { oidc: found.oidc } : {}),
      ...(found.oidc?.publisherEnvironments?.length ? { promoteEnvironments: found.oidc.publisherEnvironments } : {}),
    },
  };
}
