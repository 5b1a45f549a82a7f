// Who is calling: bearer tokens turned into the acting user, and the client's address.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { AppError } from '../../common/errors.js';
import { isProjectToken } from '../../common/schemas/tokens.js';
import { hashProjectToken } from '../auth/project-tokens.js';
import { verifyToken } from '../auth/tokens.js';
import { actorFromToken } from '../services/auth.js';
import type { Actor, Services } from '../services/context.js';
import { actorFromProjectToken } from '../services/tokens.js';
import type { SignedCredential } from '../services/context.js';

const BEARER = /^bearer\s+(\S+)\s*$/i;

/** The user of the request's bearer token; undefined when none is sent; 401 when it is not valid. */
export async function actorOf(services: Services, authorization: string | undefined): Promise<Actor | undefined> {
  if (authorization === undefined || authorization === '') return undefined;
  const m = BEARER.exec(authorization);
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

/**
 * The socket's address, or behind `proxies` trusted proxies the X-Forwarded-For entry that many from
 * the right: each proxy appends the address it was reached from, so entries further left were
 * written by the client itself and cannot move it. A header with fewer entries (a request that did
 * not come through every proxy) or an entry that is not an IP address leaves the socket's address.
 * An IPv6 zone (`fe80::1%eth0`) is dropped: it names an interface, not a client, and would make one
 * address many, of any length.
 */
export function clientAddress(req: IncomingMessage, proxies: number): string {
  if (proxies > 0) {
    const header = req.headers['x-forwarded-for'];
    const entries = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
    const entry = entries.length >= proxies ? entries[entries.length - proxies]?.trim().split('%', 1)[0] : undefined;
    if (entry && isIP(entry) !== 0) return entry;
  }
  return req.socket.remoteAddress ?? 'unknown';
}
