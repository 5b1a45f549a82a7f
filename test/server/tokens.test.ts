// Project tokens (api.md, "Project tokens"): made, listed and revoked by their user or an
// administrator; each scope against each route; the 401s that say why; only a hash in the database;
// the last use written at most once a minute. Search is not public here, so the read routes need a token.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PageInfo } from '../../common/schemas/common.js';
import { dbKinds } from '../helpers/db.js';
import { ADMIN_PASSWORD, DEFAULT_ADMIN_ID, type TestServer, startTestServer } from '../helpers/server.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const record = (projectName: string, version: string) => ({ projectName, branch: 'main', artifact: { groupId: 'tok', artifactId: 'app', version } });

describe.each(dbKinds())('project tokens on %s', (kind) => {
  let server: TestServer;
  /** Added to the real time by the server's clock. */
  let offsetMs = 0;
  let admin: string;
  let shop: { id: string; session: string };
  let other: { id: string; session: string };
  let uid: string;

  const login = async (username: string, password: string) =>
    (await server.request('POST', '/v1/authentication/generate-token', { body: { username, password } })).body.token as string;
  const makeUser = async (username: string, projectName: string) => {
    const created = await server.request('POST', '/v1/users', { token: admin, body: { username, password: `${username}-secret`, projectName, role: 'ROLE_USER' } });
    expect(created.status).toBe(201);
    return { id: created.body.userId as string, session: await login(username, `${username}-secret`) };
  };
  const makeToken = async (token: string, body: Record<string, unknown>) => {
    const res = await server.request('POST', '/v1/tokens', { token, body });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string; token: string; name: string; userId: string; expiresAt: string | null };
  };

  beforeAll(async () => {
    server = await startTestServer({ kind, config: { searchPublic: false }, now: () => new Date(Date.now() + offsetMs) });
    admin = await server.adminToken();
    shop = await makeUser('shop-ci', 'shop');
    other = await makeUser('other-ci', 'other');
    const published = await server.request('POST', '/v1/repositories', { token: admin, body: { ...record('shop', '0.1.0'), latestVersion: true } });
    uid = published.body.uid;
  });
  afterAll(() => server?.close());

  it('makes a token shown once, in the shape of api.md, and keeps only its SHA-256', async () => {
    const res = await server.request('POST', '/v1/tokens', { token: admin, body: { name: 'ci', scope: 'publish', userId: shop.id } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'ci',
      scope: 'publish',
      token: expect.stringMatching(/^rpa_[A-Za-z0-9_-]{43}$/),
      userId: shop.id,
      username: 'shop-ci',
      projectName: 'shop',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      expiresAt: null,
    });
    const token: string = res.body.token;
    const rows = await server.db('tokens').select('*');
    const row = rows.find((r) => r.id === res.body.id);
    expect(row.token_hash).toBe(sha256(token));
    // No column of any row holds the token or its random part.
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.slice(4));
    // Listing never shows it either.
    const list = await server.request('GET', '/v1/tokens', { token: admin });
    expect(list.text).not.toContain(token.slice(4));
    expect(list.body.tokens.find((t: { id: string }) => t.id === res.body.id)).toEqual({
      id: res.body.id,
      name: 'ci',
      scope: 'publish',
      userId: shop.id,
      username: 'shop-ci',
      projectName: 'shop',
      createdAt: res.body.createdAt,
      expiresAt: null,
      lastUsedAt: null,
      kind: 'ordinary',
      branch: null,
      publisherId: null,
    });
    // Two tokens never share a value.
    const second = await makeToken(admin, { name: 'ci-2', scope: 'read', userId: shop.id });
    expect(second.token).not.toBe(token);
  });

  describe('each scope against each route', () => {
    let tokens: Record<'publish' | 'read' | 'adminPublish' | 'adminRead', string>;
    beforeAll(async () => {
      tokens = {
        publish: (await makeToken(admin, { name: 'matrix-publish', scope: 'publish', userId: shop.id })).token,
        read: (await makeToken(shop.session, { name: 'matrix-read', scope: 'read' })).token,
        adminPublish: (await makeToken(admin, { name: 'matrix-publish', scope: 'publish' })).token,
        adminRead: (await makeToken(admin, { name: 'matrix-read', scope: 'read' })).token,
      };
    });

    // [route, method, path, body, publish, read, admin's publish, admin's read]
    const table = (): [string, string, string, unknown, number, number, number, number][] => [
      ['search', 'POST', '/v1/repositories/search', {}, 200, 200, 200, 200],
      ['get one', 'GET', `/v1/repositories/${uid}`, undefined, 200, 200, 200, 200],
      ['latest', 'GET', '/v1/repositories/latest?groupId=tok&artifactId=app', undefined, 200, 200, 200, 200],
      ['who am I', 'GET', '/v1/users/me', undefined, 200, 200, 200, 200],
      ['publish own project', 'POST', '/v1/repositories', record('shop', '1.0.0'), 201, 403, 200, 403],
      ['publish another project', 'POST', '/v1/repositories', record('other', '1.0.0'), 403, 403, 201, 403],
      ['create a user', 'POST', '/v1/users', { username: 'by-token', password: 'by-token-secret', projectName: 'p', role: 'ROLE_USER' }, 403, 403, 403, 403],
      ['list users', 'GET', '/v1/users', undefined, 403, 403, 403, 403],
      ['delete a user', 'DELETE', `/v1/users/${other.id}`, undefined, 403, 403, 403, 403],
      ['change own password', 'PUT', `/v1/users/${shop.id}/password`, { password: 'changed-by-token' }, 403, 403, 403, 403],
      ['change the admin password', 'PUT', `/v1/users/${DEFAULT_ADMIN_ID}/password`, { password: 'changed-by-token' }, 403, 403, 403, 403],
      ['make a token', 'POST', '/v1/tokens', { name: 'by-token', scope: 'read' }, 403, 403, 403, 403],
      ['list tokens', 'GET', '/v1/tokens', undefined, 403, 403, 403, 403],
      ['revoke a token', 'DELETE', '/v1/tokens/00000000-0000-4000-8000-000000000000', undefined, 403, 403, 403, 403],
    ];

    it.each(['publish', 'read', 'adminPublish', 'adminRead'] as const)('%s', async (which) => {
      const column = { publish: 4, read: 5, adminPublish: 6, adminRead: 7 }[which];
      for (const row of table()) {
        const [name, method, path, body] = row;
        const res = await server.request(method, path, { token: tokens[which], body });
        expect(res.status, `${name} with the ${which} token: ${res.text}`).toBe(row[column]);
        if (res.status === 403) expect(res.body._message.code).toBe('forbidden');
      }
      // Nothing a refused request asked for happened.
      expect(await server.db('users').where({ username: 'by-token' }).first()).toBeUndefined();
      expect(await server.db('users').where({ id: other.id }).first()).toBeDefined();
      expect((await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'shop-ci', password: 'shop-ci-secret' } })).status).toBe(200);
    });

    it('acts as its user: who am I answers the user, and says why a scope or management is refused', async () => {
      const me = await server.request('GET', '/v1/users/me', { token: tokens.read });
      expect(me.body).toEqual({ userId: shop.id, username: 'shop-ci', projectName: 'shop', role: 'ROLE_USER', mustChangePassword: false });
      const publish = await server.request('POST', '/v1/repositories', { token: tokens.read, body: record('shop', '9.9.9') });
      expect(publish.body._message.message).toMatch(/scope read.*scope publish/);
      const manage = await server.request('GET', '/v1/tokens', { token: tokens.publish });
      expect(manage.body._message.message).toMatch(/project token cannot manage users, passwords or tokens/);
      const other = await server.request('POST', '/v1/repositories', { token: tokens.publish, body: record('other', '9.9.9') });
      expect(other.body._message.message).toContain('may publish only to project "shop"');
    });
  });

  describe('who may make, list and revoke which tokens', () => {
    it('an administrator makes, lists and revokes any user\'s; a user only its own; another user\'s id is 404', async () => {
      const byAdmin = await makeToken(admin, { name: 'owned', scope: 'read', userId: other.id });
      const own = await makeToken(other.session, { name: 'own', scope: 'publish' });
      expect(own.userId).toBe(other.id);
      const explicitOwn = await makeToken(other.session, { name: 'own-explicit', scope: 'read', userId: other.id });
      expect(explicitOwn.userId).toBe(other.id);

      // A user cannot make one for someone else.
      const forOther = await server.request('POST', '/v1/tokens', { token: shop.session, body: { name: 'sneaky', scope: 'publish', userId: other.id } });
      expect(forOther.status).toBe(403);
      const unknownUser = await server.request('POST', '/v1/tokens', { token: admin, body: { name: 'x', scope: 'read', userId: '00000000-0000-4000-8000-000000000000' } });
      expect(unknownUser.status).toBe(404);

      // Lists: a user sees its own; an administrator all, or one user's.
      const names = (res: { body: { tokens: { name: string; username: string }[] } }) => res.body.tokens.map((t) => `${t.username}/${t.name}`);
      const mine = await server.request('GET', '/v1/tokens', { token: other.session });
      expect(names(mine)).toEqual(['other-ci/own', 'other-ci/own-explicit', 'other-ci/owned']);
      expect((await server.request('GET', `/v1/tokens?userId=${shop.id}`, { token: other.session })).status).toBe(403);
      const all = await server.request('GET', '/v1/tokens', { token: admin });
      expect(names(all)).toEqual(expect.arrayContaining(['other-ci/owned', 'shop-ci/ci', 'admin/matrix-read']));
      const one = await server.request('GET', `/v1/tokens?userId=${other.id}`, { token: admin });
      expect(names(one)).toEqual(names(mine));
      expect((await server.request('GET', '/v1/tokens?userId=00000000-0000-4000-8000-000000000000', { token: admin })).status).toBe(404);
      expect((await server.request('GET', '/v1/tokens?userId=not-a-uuid', { token: admin })).status).toBe(400);

      // Revoking: another user's token id is 404, as an unknown one; the owner and an administrator may.
      const shopsOwn = await makeToken(shop.session, { name: 'shop-own', scope: 'read' });
      expect((await server.request('DELETE', `/v1/tokens/${shopsOwn.id}`, { token: other.session })).status).toBe(404);
      expect((await server.request('DELETE', '/v1/tokens/00000000-0000-4000-8000-000000000000', { token: admin })).status).toBe(404);
      expect((await server.request('DELETE', '/v1/tokens/not-a-uuid', { token: admin })).status).toBe(400);
      expect((await server.request('GET', '/v1/users/me', { token: shopsOwn.token })).status).toBe(200);
      expect((await server.request('DELETE', `/v1/tokens/${own.id}`, { token: other.session })).status).toBe(204);
      expect((await server.request('DELETE', `/v1/tokens/${byAdmin.id}`, { token: admin })).status).toBe(204);
      expect((await server.request('DELETE', `/v1/tokens/${byAdmin.id}`, { token: admin })).status).toBe(404);
      expect(names(await server.request('GET', '/v1/tokens', { token: other.session }))).toEqual(['other-ci/own-explicit']);
    });

    it('names are unique per user (409), free again once revoked, and may repeat across users', async () => {
      const first = await makeToken(admin, { name: 'rotate-me', scope: 'publish', userId: shop.id });
      const again = await server.request('POST', '/v1/tokens', { token: admin, body: { name: 'rotate-me', scope: 'read', userId: shop.id } });
      expect(again.status).toBe(409);
      expect(again.body._message.code).toBe('conflict');
      await makeToken(admin, { name: 'rotate-me', scope: 'publish', userId: other.id });
      expect((await server.request('DELETE', `/v1/tokens/${first.id}`, { token: admin })).status).toBe(204);
      await makeToken(admin, { name: 'rotate-me', scope: 'publish', userId: shop.id });
    });

    // 104 token requests at once and their checks: a minute on busy cores, within the suite's limit; not a measure of speed.
    it('at most 100 active tokens per user (409 beyond); expired and revoked ones do not count', async () => {
      const many = await makeUser('many-ci', 'many');
      const soon = new Date(Date.now() + offsetMs + 3600_000).toISOString();
      const made: { id: string }[] = [await makeToken(many.session, { name: 'expires-soon', scope: 'read', expiresAt: soon })];
      // 104 asked at once: the count and the insert take turns per user, so exactly 99 more are made.
      const answers = await Promise.all(
        Array.from({ length: 104 }, (_, i) => server.request('POST', '/v1/tokens', { token: many.session, body: { name: `t${i}`, scope: 'read' } })),
      );
      expect(answers.filter((res) => res.status === 409)).toHaveLength(5);
      made.push(...answers.filter((res) => res.status === 201).map((res) => res.body as { id: string }));
      expect(made).toHaveLength(100);
      const refused = async (token: string) => {
        const res = await server.request('POST', '/v1/tokens', { token, body: { name: 'one-more', scope: 'read', userId: many.id } });
        expect(res.status, res.text).toBe(409);
        expect(res.body._message).toEqual({
          category: 'ERROR',
          code: 'conflict',
          message: 'user many-ci has 100 active project tokens, the most a user may have: revoke one first (repoadmin token list, repoadmin token revoke)',
        });
      };
      await refused(admin);
      // Other users are not affected.
      await makeToken(admin, { name: 'not-many', scope: 'read', userId: other.id });
      offsetMs += 2 * 3600_000;
      try {
        // The expired one no longer counts; the next one is the 100th again (a login of this later time).
        const later = await login('many-ci', 'many-ci-secret');
        await makeToken(later, { name: 'after-expiry', scope: 'read' });
        await refused(later);
        // Nor does a revoked one.
        expect((await server.request('DELETE', `/v1/tokens/${made[1]!.id}`, { token: later })).status).toBe(204);
        await makeToken(later, { name: 'after-revoke', scope: 'read' });
        await refused(later);
      } finally {
        offsetMs -= 2 * 3600_000;
      }
    });

    it("revokes all of a user's tokens in one call: the user's own or an administrator's, no one else's", async () => {
      const leaked = await makeUser('leaked-ci', 'leaked');
      const mine = await Promise.all(['a', 'b', 'c'].map((name) => makeToken(leaked.session, { name, scope: 'publish' })));
      const others = await makeToken(admin, { name: 'stays', scope: 'read', userId: other.id });
      const all = (token: string, userId: string) => server.request('DELETE', `/v1/tokens?userId=${userId}`, { token });

      // Another user may not; a project token may not; an unknown user is 404; userId is required.
      expect((await all(other.session, leaked.id)).status).toBe(403);
      expect((await all(mine[0]!.token, leaked.id)).status).toBe(403);
      expect((await all(admin, crypto.randomUUID())).status).toBe(404);
      expect((await server.request('DELETE', '/v1/tokens', { token: admin })).status).toBe(400);

      const revoked = await all(leaked.session, leaked.id);
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body).toEqual({ revoked: 3 });
      for (const made of mine) {
        const res = await server.request('POST', '/v1/repositories/search', { token: made.token, body: {} });
        expect(res.status).toBe(401);
        expect(res.body._message.message).toMatch(/^the project token was revoked at /);
      }
      expect((await server.request('GET', `/v1/tokens?userId=${leaked.id}`, { token: admin })).body.tokens).toEqual([]);
      // Another user's token is untouched; an administrator may revoke anyone's, and none left is 0.
      expect((await server.request('POST', '/v1/repositories/search', { token: others.token, body: {} })).status).toBe(200);
      expect((await all(admin, leaked.id)).body).toEqual({ revoked: 0 });
      await makeToken(leaked.session, { name: 'a', scope: 'publish' });
      expect((await all(admin, leaked.id)).body).toEqual({ revoked: 1 });
    });

    it('checks the request: name, scope, expiry in the future and within 10 years', async () => {
      const bad = async (body: unknown, path: string) => {
        const res = await server.request('POST', '/v1/tokens', { token: admin, body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
      };
      await bad({ scope: 'read' }, 'name');
      await bad({ name: '', scope: 'read' }, 'name');
      await bad({ name: 'x'.repeat(101), scope: 'read' }, 'name');
      await bad({ name: 'x' }, 'scope');
      await bad({ name: 'x', scope: 'admin' }, 'scope');
      await bad({ name: 'x', scope: 'read', expiresAt: '2030-01-01T00:00:00' }, 'expiresAt');
      await bad({ name: 'x', scope: 'read', expiresAt: 'tomorrow' }, 'expiresAt');
      await bad({ name: 'x', scope: 'read', expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt');
      const tooLate = new Date(Date.now() + offsetMs);
      tooLate.setUTCFullYear(tooLate.getUTCFullYear() + 10, tooLate.getUTCMonth(), tooLate.getUTCDate() + 2);
      await bad({ name: 'x', scope: 'read', expiresAt: tooLate.toISOString() }, 'expiresAt');
      await bad({ name: 'x', scope: 'read', userId: 'nope' }, 'userId');
      const year = new Date().getUTCFullYear();
      const withOffset = await makeToken(admin, { name: 'with-offset', scope: 'read', expiresAt: `${year + 2}-01-01T00:00:00+01:00` });
      expect(withOffset.expiresAt).toBe(`${year + 1}-12-31T23:00:00.000Z`);
      const never = await makeToken(admin, { name: 'never', scope: 'read', expiresAt: null });
      expect(never.expiresAt).toBeNull();
    });
  });

  describe('401 that says why', () => {
    const refusal = async (token: string) => {
      const res = await server.request('POST', '/v1/repositories/search', { token, body: {} });
      expect(res.status).toBe(401);
      expect(res.body._message.code).toBe('unauthorized');
      return res.body._message.message as string;
    };

    it('for a revoked token', async () => {
      const made = await makeToken(admin, { name: 'to-revoke', scope: 'publish', userId: shop.id });
      expect((await server.request('DELETE', `/v1/tokens/${made.id}`, { token: admin })).status).toBe(204);
      expect(await refusal(made.token)).toMatch(/^the project token was revoked at \d{4}-.*Z: make a new one$/);
    });

    it('for an expired token', async () => {
      const soon = new Date(Date.now() + offsetMs + 3600_000).toISOString();
      const made = await makeToken(admin, { name: 'short-lived', scope: 'read', userId: shop.id, expiresAt: soon });
      expect((await server.request('POST', '/v1/repositories/search', { token: made.token, body: {} })).status).toBe(200);
      offsetMs += 2 * 3600_000;
      try {
        expect(await refusal(made.token)).toBe(`the project token "short-lived" expired at ${soon}: make a new one`);
      } finally {
        offsetMs -= 2 * 3600_000;
      }
      // Still listed (with its expiry) until revoked, so its owner sees why.
      const list = await server.request('GET', `/v1/tokens?userId=${shop.id}`, { token: admin });
      expect(list.body.tokens.find((t: { id: string }) => t.id === made.id).expiresAt).toBe(soon);
    });

    it('for a token whose user was deleted; the user\'s tokens are gone from the table', async () => {
      const temp = await makeUser('temp-ci', 'temp');
      const made = await makeToken(admin, { name: 'ci', scope: 'publish', userId: temp.id });
      expect((await server.request('GET', '/v1/users/me', { token: made.token })).status).toBe(200);
      expect((await server.request('DELETE', `/v1/users/${temp.id}`, { token: admin })).status).toBe(204);
      expect(await refusal(made.token)).toBe('the project token belonged to a user that was deleted: ask an administrator for a new one');
      expect(await server.db('tokens').where({ user_id: temp.id })).toEqual([]);
    });

    it('for a token this server never made', async () => {
      expect(await refusal('rpa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toBe(
        'the project token is not known to this server (never made here, or mistyped)',
      );
      expect(await refusal('rpa_')).toMatch(/not known/);
      expect(await refusal('rpa_\u00e9x')).toMatch(/not known/);
    });

    it('but not after a password change: a project token is a credential of its own', async () => {
      const made = await makeToken(admin, { name: 'survives', scope: 'read', userId: shop.id });
      const changed = await server.request('PUT', `/v1/users/${shop.id}/password`, { token: admin, body: { password: 'shop-ci-secret-2' } });
      expect(changed.status).toBe(200);
      expect((await server.request('GET', '/v1/users/me', { token: made.token })).status).toBe(200);
      await server.request('PUT', `/v1/users/${shop.id}/password`, { token: admin, body: { password: 'shop-ci-secret' } });
      shop.session = await login('shop-ci', 'shop-ci-secret');
    });
  });

  describe('while the user is deleted at the same time', () => {
    const deletedMessage = 'the project token belonged to a user that was deleted: ask an administrator for a new one';
    const refusalOf = async (token: string) => {
      const res = await server.request('GET', '/v1/users/me', { token });
      expect(res.status).toBe(401);
      return res.body._message.message as string;
    };

    it('a token being made is either refused (404) or made and then refused as its user\'s', async () => {
      for (let round = 0; round < 8; round++) {
        const user = await makeUser(`race-make-${round}`, 'race');
        const makes = Array.from({ length: 6 }, (_, i) =>
          server.request('POST', '/v1/tokens', { token: admin, body: { name: `t${i}`, scope: 'publish', userId: user.id } }),
        );
        const [deleted, ...made] = await Promise.all([server.request('DELETE', `/v1/users/${user.id}`, { token: admin }), ...makes]);
        expect(deleted.status).toBe(204);
        for (const res of made) {
          expect([201, 404], res.text).toContain(res.status);
          if (res.status === 201) expect(await refusalOf(res.body.token)).toBe(deletedMessage);
          else expect(res.body._message.message).toBe(`no user with id ${user.id}`);
        }
      }
    });

    it('a token being revoked is refused afterwards as revoked or as its user\'s, and both calls succeed', async () => {
      for (let round = 0; round < 8; round++) {
        const user = await makeUser(`race-revoke-${round}`, 'race');
        const tokens = await Promise.all([0, 1, 2].map((i) => makeToken(admin, { name: `t${i}`, scope: 'read', userId: user.id })));
        const [deleted, ...revoked] = await Promise.all([
          server.request('DELETE', `/v1/users/${user.id}`, { token: admin }),
          ...tokens.map((t) => server.request('DELETE', `/v1/tokens/${t.id}`, { token: admin })),
        ]);
        expect(deleted.status, deleted.text).toBe(204);
        for (const [i, res] of revoked.entries()) {
          // 404 when the user's deletion took the token first.
          expect([204, 404], res.text).toContain(res.status);
          expect(await refusalOf(tokens[i]!.token)).toMatch(/^(the project token was revoked at .*|the project token belonged to a user that was deleted.*)$/);
        }
      }
      expect(server.logs.filter((l) => l.includes('"level":50'))).toEqual([]);
    });
  });

  describe('a fresh login to make one (docs/api.md, "POST /v1/tokens")', () => {
    const SIXTEEN_MINUTES = 16 * 60_000;
    /** A session token of this user issued `ageMs` before the server's now. */
    const sessionOfAge = async (username: string, password: string, ageMs: number) => {
      offsetMs -= ageMs;
      try {
        return await login(username, password);
      } finally {
        offsetMs += ageMs;
      }
    };
    const auditOf = async (requestId: string) =>
      vi.waitFor(async () => {
        const row = await server.db('audit').where({ request_id: requestId }).first();
        if (!row) throw new Error(`no audit entry for ${requestId} yet`);
        return row as { action: string; outcome: string; details: unknown };
      });

    it('a session token older than 15 minutes is refused with a 401 that says to log in again or send the password', async () => {
      const stale = await sessionOfAge('shop-ci', 'shop-ci-secret', SIXTEEN_MINUTES);
      const requestId = `stale-${kind}-${Date.now()}`;
      const res = await server.request('POST', '/v1/tokens', { token: stale, body: { name: 'stale', scope: 'read' }, headers: { 'X-Request-Id': requestId } });
      expect(res.status, res.text).toBe(401);
      expect(res.body).toEqual({
        _status: false,
        _message: {
          category: 'ERROR',
          code: 'unauthorized',
          message: `making a project token needs a fresh login: this session token is more than 15 minutes old. Log in again (repoadmin login), or send your password in the request's "password" field`,
        },
        reason: 'fresh_login_required',
      });
      expect(await server.db('tokens').where({ user_id: shop.id, name: 'stale' })).toEqual([]);
      // The same token still does everything else.
      expect((await server.request('GET', '/v1/tokens', { token: stale })).status).toBe(200);
      expect(await auditOf(requestId)).toMatchObject({ action: 'token.created', outcome: 'denied' });
      // One issued 14 minutes ago is fresh.
      const recent = await sessionOfAge('shop-ci', 'shop-ci-secret', 14 * 60_000);
      await makeToken(recent, { name: 'recent', scope: 'read' });
    });

    it("takes the caller's password instead, checked as a login is; a wrong one is a 401 and nothing is made", async () => {
      const stale = await sessionOfAge('admin', ADMIN_PASSWORD, SIXTEEN_MINUTES);
      const requestId = `password-${kind}-${Date.now()}`;
      const made = await server.request('POST', '/v1/tokens', {
        token: stale,
        body: { name: 'with-password', scope: 'read', userId: shop.id, password: ADMIN_PASSWORD },
        headers: { 'X-Request-Id': requestId },
      });
      expect(made.status, made.text).toBe(201);
      expect(made.body).toMatchObject({ name: 'with-password', userId: shop.id });
      expect(await auditOf(requestId)).toMatchObject({ action: 'token.created', outcome: 'ok' });

      // The password is the caller's: the token's user's does not count, nor does a wrong one, even with a fresh session.
      for (const [i, [token, password]] of ([[stale, 'shop-ci-secret'], [stale, 'not-the-password'], [admin, 'not-the-password']] as const).entries()) {
        const wrongId = `wrong-${kind}-${Date.now()}-${i}`;
        const res = await server.request('POST', '/v1/tokens', {
          token,
          body: { name: 'wrong-password', scope: 'read', userId: shop.id, password },
          headers: { 'X-Request-Id': wrongId },
        });
        expect(res.status, res.text).toBe(401);
        expect(res.body._message.message).toBe('wrong password for admin: no project token was made');
        expect(res.body.reason).toBe('fresh_login_required');
        expect(await auditOf(wrongId)).toMatchObject({ action: 'token.created', outcome: 'denied' });
      }
      expect(await server.db('tokens').where({ name: 'wrong-password' })).toEqual([]);
      // Never stored nor logged.
      expect(JSON.stringify(await server.db('audit').select('*'))).not.toContain('not-the-password');
      expect(server.logs.join('\n')).not.toContain('not-the-password');
      await server.db('login_attempts').delete();
    });

    it('wrong passwords count against the login limits: the 11th attempt is 429, for logins too', async () => {
      const locked = await makeUser('locked-ci', 'locked');
      for (let i = 0; i < 10; i++) {
        const res = await server.request('POST', '/v1/tokens', { token: locked.session, body: { name: 'x', scope: 'read', password: `wrong-${i}-password` } });
        expect(res.status, res.text).toBe(401);
      }
      const right = await server.request('POST', '/v1/tokens', { token: locked.session, body: { name: 'x', scope: 'read', password: 'locked-ci-secret' } });
      expect(right.status, right.text).toBe(429);
      expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
      const loginNow = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'locked-ci', password: 'locked-ci-secret' } });
      expect(loginNow.status).toBe(429);
      expect(await server.db('tokens').where({ user_id: locked.id })).toEqual([]);
      await server.db('login_attempts').delete();
    });

    it('a password is checked before anything is made, and the right one clears the failures as a login does', async () => {
      const user = await makeUser('retry-ci', 'retry');
      const stale = await sessionOfAge('retry-ci', 'retry-ci-secret', SIXTEEN_MINUTES);
      expect((await server.request('POST', '/v1/tokens', { token: stale, body: { name: 'x', scope: 'read', password: 'wrong-password' } })).status).toBe(401);
      const res = await server.request('POST', '/v1/tokens', { token: stale, body: { name: 'x', scope: 'read', password: 'retry-ci-secret' } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.userId).toBe(user.id);
      expect(await server.db('login_attempts').where({ scope: 'user', subject: 'retry-ci' })).toEqual([]);
    });
  });

  describe('listing in pages', () => {
    type Listed = { body: { tokens: { id: string; name: string; username: string }[]; page: PageInfo }; status: number; text: string };
    const list = (token: string, query: string) => server.request('GET', `/v1/tokens?${query}`, { token }) as Promise<Listed>;

    it("pages one user's tokens by name, with the search's paging fields", async () => {
      const paged = await makeUser('paged-ci', 'paged');
      for (const name of ['t3', 't1', 't7', 't5', 't2', 't6', 't4']) await makeToken(admin, { name, scope: 'read', userId: paged.id });
      const pages = await Promise.all([1, 2, 3, 4].map((page) => list(paged.session, `page=${page}&size=3`)));
      expect(pages.map((p) => p.body.tokens.map((t) => t.name))).toEqual([['t1', 't2', 't3'], ['t4', 't5', 't6'], ['t7'], []]);
      expect(pages.map((p) => p.body.page)).toEqual([
        { totalElements: 7, totalPages: 3, currentPage: 1, numberOfElements: 3 },
        { totalElements: 7, totalPages: 3, currentPage: 2, numberOfElements: 3 },
        { totalElements: 7, totalPages: 3, currentPage: 3, numberOfElements: 1 },
        { totalElements: 7, totalPages: 3, currentPage: 4, numberOfElements: 0 },
      ]);
      // An administrator's view of the same user is the same.
      expect((await list(admin, `userId=${paged.id}&page=2&size=3`)).body).toEqual(pages[1]!.body);
    });

    it("an administrator's pages of everyone's tokens, by user and name, neither repeat nor skip one; 100 a page unless asked", async () => {
      const whole = await list(admin, 'size=100');
      const total = whole.body.page.totalElements;
      expect(total).toBeGreaterThan(10);
      const seen: { username: string; name: string; id: string }[] = [];
      for (let page = 1; page <= Math.ceil(total / 7); page++) seen.push(...(await list(admin, `page=${page}&size=7`)).body.tokens);
      expect(seen).toHaveLength(total);
      expect(new Set(seen.map((t) => t.id)).size).toBe(total);
      // By user name (in byte order on every kind), and the pages in the order of the whole list.
      const usernames = seen.map((t) => t.username);
      expect(usernames).toEqual([...usernames].sort());
      expect(seen.slice(0, whole.body.tokens.length).map((t) => t.id)).toEqual(whole.body.tokens.map((t) => t.id));
      const unpaged = await list(admin, '');
      expect(unpaged.body.page).toEqual({ totalElements: total, totalPages: Math.ceil(total / 100), currentPage: 1, numberOfElements: Math.min(total, 100) });
    });

    it('refuses bad paging as the search does', async () => {
      for (const query of ['page=0', 'size=0', 'size=101', 'page=x', 'size=1e1', 'page=0x10', 'page=1&page=2']) {
        const res = await list(admin, query);
        expect(res.status, query).toBe(400);
        expect(res.body).toMatchObject({ _message: { code: 'validation' } });
      }
      expect((await list(admin, 'page=&size=')).status).toBe(200);
    });
  });

  it('writes lastUsedAt on use, at most once a minute', async () => {
    const made = await makeToken(admin, { name: 'busy', scope: 'read', userId: shop.id });
    const lastUsed = async () => (await server.db('tokens').where({ id: made.id }).first()).last_used_at as Date | null;
    expect(await lastUsed()).toBeNull();
    const use = async () => expect((await server.request('GET', '/v1/users/me', { token: made.token })).status).toBe(200);

    await use();
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);
    expect(Math.abs(first!.getTime() - (Date.now() + offsetMs))).toBeLessThan(5000);
    const listed = await server.request('GET', `/v1/tokens?userId=${shop.id}`, { token: admin });
    expect(listed.body.tokens.find((t: { id: string }) => t.id === made.id).lastUsedAt).toBe(first!.toISOString());

    // Many uses within the minute leave it as it was.
    offsetMs += 30_000;
    for (let i = 0; i < 5; i++) await use();
    expect((await lastUsed())!.getTime()).toBe(first!.getTime());

    // A minute after the recorded use, the next use moves it.
    offsetMs += 31_000;
    await use();
    const second = await lastUsed();
    expect(second!.getTime() - first!.getTime()).toBeGreaterThanOrEqual(61_000);
    await use();
    expect((await lastUsed())!.getTime()).toBe(second!.getTime());
  });
});

describe('the first administrator, while it must change its password', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ mustChangeAdminPassword: true });
  });
  afterAll(() => server?.close());

  it('cannot make project tokens', async () => {
    const token = (await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'admin', password: 'password' } })).body.token;
    const res = await server.request('POST', '/v1/tokens', { token, body: { name: 'ci', scope: 'publish' } });
    expect(res.status).toBe(403);
    expect(res.body._message.message).toContain('must change the initial password first');
    expect(await server.db('tokens').count({ n: '*' })).toEqual([{ n: expect.anything() }]);
    expect(Number((await server.db('tokens').count({ n: '*' }))[0]!.n)).toBe(0);
  });
});
