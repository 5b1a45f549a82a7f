// JWT bearer tokens: HS256 only, with the user's id and token version so they can be revoked.
import { type KeyObject, createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { AppError } from '../../common/errors.js';
import { TokenClaims } from '../../common/schemas/auth.js';
import type { Role } from '../../common/schemas/users.js';

export interface TokenSettings {
  /**
   * The signing secret as a KeyObject, made once: given a string, jsonwebtoken first tries to read
   * it as a PEM public key on every verification and throws that attempt away (5% of a publish).
   */
  key: KeyObject;
  issuer: string;
  ttlSeconds: number;
  /**
   * Tokens this server verified, by their whole text (signature included), with their claims: a
   * pipeline sends the same token with every request, and checking its signature again is a
   * twentieth of a publish. Only their expiry is checked again; the oldest go first past VERIFIED_KEPT.
   */
  verified: Map<string, TokenClaims>;
}

/** How many verified tokens are remembered. */
export const VERIFIED_KEPT = 1_000;

export function tokenSettings(secret: string, issuer: string, ttlSeconds: number): TokenSettings {
  return { key: createSecretKey(Buffer.from(secret, 'utf8')), issuer, ttlSeconds, verified: new Map() };
}

export interface IssuedToken {
  token: string;
  expiresAt: Date;
}

export function issueToken(
  settings: TokenSettings,
  user: { userId: string; username: string; role: Role; tokenVersion: number },
  now: Date = new Date(),
): IssuedToken {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + settings.ttlSeconds;
  const claims: TokenClaims = {
    sub: user.username,
    scopes: [{ authority: user.role }],
    iss: settings.issuer,
    iat,
    exp,
    uid: user.userId,
    tv: user.tokenVersion,
  };
  const token = jwt.sign(claims, settings.key, { algorithm: 'HS256' });
  return { token, expiresAt: new Date(exp * 1000) };
}

/** What jsonwebtoken does not check and the server relies on (the issuer it checks itself). */
const CHECKED_CLAIMS = TokenClaims.pick({ sub: true, uid: true, tv: true, exp: true });

/** Checks signature, algorithm, issuer and expiry; the caller checks the user and its version. */
export function verifyToken(settings: TokenSettings, token: string): TokenClaims {
  const known = settings.verified.get(token);
  if (known) {
    // Expired as jsonwebtoken has it: from the second of `exp` on.
    if (Math.floor(Date.now() / 1000) < known.exp) return known;
    settings.verified.delete(token);
  }
  // Frozen: every request with this token gets the same object.
  const claims = Object.freeze(verifySignedToken(settings, token));
  settings.verified.set(token, claims);
  if (settings.verified.size > VERIFIED_KEPT) settings.verified.delete(settings.verified.keys().next().value!);
  return claims;
}

function verifySignedToken(settings: TokenSettings, token: string): TokenClaims {
  let claims: unknown;
  try {
    claims = jwt.verify(token, settings.key, { algorithms: ['HS256'], issuer: settings.issuer });
  } catch (error) {
    const expired = error instanceof jwt.TokenExpiredError;
    throw new AppError('unauthorized', expired ? 'the token has expired: get a new one' : 'the token is not valid', {
      cause: error,
    });
  }
  // jsonwebtoken checks exp only when there is one: a token without it would never expire.
  if (!CHECKED_CLAIMS.safeParse(claims).success) throw new AppError('unauthorized', 'the token is not valid');
  return claims as TokenClaims;
}
