// Session tokens: verified once, then remembered by their text until they expire.
import jwt from 'jsonwebtoken';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VERIFIED_KEPT, issueToken, tokenSettings, verifyToken } from './tokens.js';

const user = { userId: '7c0a3b5e-3f7e-4a57-9d61-0f1b2c3d4e5f', username: 'ci', role: 'ROLE_USER' as const, tokenVersion: 3 };

describe('verifyToken', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('checks a token once and answers the same claims from memory after that', () => {
    const settings = tokenSettings('a-secret-of-enough-length-for-tests', 'repoadmin', 3600);
    const { token } = issueToken(settings, user);
    const verify = vi.spyOn(jwt, 'verify');
    const first = verifyToken(settings, token);
    expect(first).toMatchObject({ sub: 'ci', uid: user.userId, tv: 3 });
    expect(verifyToken(settings, token)).toBe(first);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('refuses a remembered token from the second it expires, as jsonwebtoken does', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-24T10:00:00.500Z'));
    const settings = tokenSettings('a-secret-of-enough-length-for-tests', 'repoadmin', 60);
    const { token } = issueToken(settings, user);
    expect(verifyToken(settings, token).exp).toBe(Date.parse('2026-11-24T10:01:00Z') / 1000);
    vi.setSystemTime(new Date('2026-11-24T10:00:59.999Z'));
    expect(verifyToken(settings, token).sub).toBe('ci');
    vi.setSystemTime(new Date('2026-11-24T10:01:00.000Z'));
    expect(() => verifyToken(settings, token)).toThrow('the token has expired: get a new one');
    expect(settings.verified.has(token)).toBe(false);
  });

  it('remembers nothing of a token that fails, and tells a changed signature from the remembered token', () => {
    const settings = tokenSettings('a-secret-of-enough-length-for-tests', 'repoadmin', 3600);
    const { token } = issueToken(settings, user);
    verifyToken(settings, token);
    const [header, payload, signature] = token.split('.');
    const forged = `${header}.${payload}.${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(() => verifyToken(settings, forged)).toThrow('the token is not valid');
    const elsewhere = issueToken(tokenSettings('another-secret-of-enough-length', 'repoadmin', 3600), user).token;
    expect(() => verifyToken(settings, elsewhere)).toThrow('the token is not valid');
    expect([...settings.verified.keys()]).toEqual([token]);
  });

  it(`keeps at most ${VERIFIED_KEPT} tokens, the oldest going first`, () => {
    const settings = tokenSettings('a-secret-of-enough-length-for-tests', 'repoadmin', 3600);
    const tokens = Array.from({ length: VERIFIED_KEPT + 5 }, (_, i) => issueToken(settings, { ...user, tokenVersion: i }).token);
    for (const token of tokens) verifyToken(settings, token);
    expect(settings.verified.size).toBe(VERIFIED_KEPT);
    expect(settings.verified.has(tokens[4]!)).toBe(false);
    expect(settings.verified.has(tokens[5]!)).toBe(true);
    expect(settings.verified.has(tokens.at(-1)!)).toBe(true);
  });
});

describe('issueToken and verifyToken', () => {
  const secret = 'a-secret-of-enough-length-for-tests';
  const settings = () => tokenSettings(secret, 'repoadmin', 3600);

  it('issues HS256 claims of the user, expiring after the configured time', () => {
    const now = new Date('2026-11-24T10:00:00.700Z');
    const { token, expiresAt } = issueToken(settings(), user, now);
    expect(expiresAt.toISOString()).toBe('2026-11-24T11:00:00.000Z');
    expect(jwt.decode(token, { complete: true })).toMatchObject({
      header: { alg: 'HS256' },
      payload: { sub: 'ci', scopes: [{ authority: 'ROLE_USER' }], iss: 'repoadmin', iat: Date.parse('2026-11-24T10:00:00Z') / 1000, exp: Date.parse('2026-11-24T11:00:00Z') / 1000, uid: user.userId, tv: 3 },
    });
  });

  it('refuses a token of another issuer, of another algorithm, or without the claims it relies on', () => {
    const claims = { sub: 'ci', scopes: [], iss: 'repoadmin', uid: user.userId, tv: 3 };
    const exp = Math.floor(Date.now() / 1000) + 600;
    const signed = (payload: object, algorithm: jwt.Algorithm = 'HS256') => jwt.sign(payload, secret, { algorithm });
    expect(verifyToken(settings(), signed({ ...claims, exp })).sub).toBe('ci');
    expect(() => verifyToken(settings(), signed({ ...claims, exp, iss: 'elsewhere' }))).toThrow('the token is not valid');
    expect(() => verifyToken(settings(), signed({ ...claims, exp }, 'HS512'))).toThrow('the token is not valid');
    for (const left of ['exp', 'uid', 'tv', 'sub'] as const) {
      const { [left]: _left, ...rest } = { ...claims, exp };
      expect(() => verifyToken(settings(), signed(rest)), left).toThrow('the token is not valid');
    }
  });
});
