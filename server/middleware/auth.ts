// Bearer tokens on the secured routes, the role table and the "must change password" gate.
import { isIP } from 'node:net';
import type { Context, Middleware } from 'koa';
import { AppError } from '../../common/errors.js';
import { type TokenScope, isProjectToken, scopeAllows } from '../../common/schemas/tokens.js';
import type { Role } from '../../common/schemas/users.js';
import { hashProjectToken } from '../auth/project-tokens.js';
import { verifyToken } from '../auth/tokens.js';
import { actorFromToken } from '../services/auth.js';
import type { Actor, Services } from '../services/context.js';
import { actorFromProjectToken } from '../services/tokens.js';
import type { SignedCredential } from '../services/versions.js';

const BEARER = /^bearer\s+(\S+)\s*$/i;

async function actorOf(services: Services, ctx: Context): Promise<Actor | undefined> {
  const header = ctx.get('Authorization');
  if (header === '') return undefined;
  const m = BEARER.exec(header);
  if (!m) throw new AppError('unauthorized', 'send the token as "Authorization: Bearer <token>"');
  const token = m[1]!;
  return isProjectToken(token) ? actorFromProjectToken(services, token) : actorFromToken(services, token);
}

/**
 * The request's bearer token when it is well formed and, for a session token, signed by this
 * server and not expired; what the database knows of it is not read here. Undefined otherwise: the
 * usual checks then say what is wrong.
 */
export function signedCredential(services: Services, authorization: string | undefined): SignedCredential | undefined {
  const m = BEARER.exec(authorization ?? '');
  if (!m) return undefined;
  const token = m[1]!;
  if (isProjectToken(token)) return { kind: 'project', tokenHash: hashProjectToken(token) };
  try {
    const claims = verifyToken(services.tokens, token);
    return { kind: 'session', userId: claims.uid, username: claims.sub, tokenVersion: claims.tv };
  } catch {
    return undefined;
  }
}

export function currentActor(ctx: Context): Actor {
  const actor = ctx.state.actor as Actor | undefined;
  if (!actor) throw new AppError('unauthorized', 'a bearer token is required');
  return actor;
}

export interface TokenRule {
  /** Only this role passes (403 for the other). */
  role?: Role;
  /** Lets a user who must change the password through, for this request. */
  allowWhileMustChange?: (ctx: Context, actor: Actor) => boolean;
  /**
   * The scope a project token needs here (`read` is within `publish`). Without one, project tokens
   * are refused: user and token management take a session token.
   */
  scope?: TokenScope;
}

function checkScope(actor: Actor, needed: TokenScope | undefined): void {
  const token = actor.projectToken;
  if (!token) return;
  if (!needed) {
    throw new AppError('forbidden', 'a project token cannot manage users, passwords or tokens: log in with a user name and password for that');
  }
  if (needed === 'publish' && !scopeAllows(token.scope, 'publish')) {
    throw new AppError('forbidden', `the project token "${token.name}" has the scope read: publishing needs a token with the scope publish`);
  }
  if (needed === 'delete' && !scopeAllows(token.scope, 'delete')) {
    throw new AppError('forbidden', `the project token "${token.name}" has the scope ${token.scope}: deleting needs a token with the scope delete`);
  }
}

export function requireToken(services: Services, rule: TokenRule = {}): Middleware {
  return async (ctx, next) => {
    const actor = await actorOf(services, ctx);
    if (!actor) throw new AppError('unauthorized', 'a bearer token is required: get one from POST /v1/authentication/generate-token');
    if (actor.mustChangePassword && !rule.allowWhileMustChange?.(ctx, actor)) {
      throw new AppError(
        'forbidden',
        `user ${actor.username} must change the initial password first: PUT /v1/users/${actor.userId}/password with {"password": "..."} (or: repoadmin user passwd)`,
      );
    }
    checkScope(actor, rule.scope);
    if (rule.role && actor.role !== rule.role) {
      throw new AppError('forbidden', `this needs the role ${rule.role}; user ${actor.username} has ${actor.role}`);
    }
    ctx.state.actor = actor;
    await next();
  };
}

/** Public routes: a token is read when one is sent, and required only when `required()` says so. */
export function optionalToken(services: Services, required: () => boolean): Middleware {
  return async (ctx, next) => {
    const actor = await actorOf(services, ctx);
    if (!actor && required()) {
      throw new AppError('unauthorized', 'this server requires a bearer token for searching');
    }
    ctx.state.actor = actor;
    await next();
  };
}

/**
 * The socket's address, or with a trusted proxy the first X-Forwarded-For entry when it is an IP
 * address. An IPv6 zone (`fe80::1%eth0`) is dropped: it names an interface, not a client, and would
 * make one address many, of any length.
 */
export function clientAddress(ctx: Context, trustProxy: boolean): string {
  if (trustProxy) {
    const first = ctx.get('X-Forwarded-For').split(',')[0]?.trim().split('%', 1)[0];
    if (first && isIP(first) !== 0) return first;
  }
  return ctx.req.socket.remoteAddress ?? 'unknown';
}
