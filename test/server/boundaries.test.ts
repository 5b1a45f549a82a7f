// Rules that one changed character would break, each checked over HTTP at its edge: a project token
// at and after its expiry on the publish path, the first administrator's password gate, and the
// body limit. Each test names the change it catches, so a reader can make it and watch the test fail.
import http from 'node:http';
import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { DEFAULT_ADMIN_ID, type TestServer, startTestServer } from '../helpers/server.js';

/** The contract's body limit (api.md): at most 1 MiB is read. */
const ONE_MIB = 1024 * 1024;

const record = (version: string) => ({ projectName: 'edge', branch: 'main', artifact: { groupId: 'edge', artifactId: 'app', version } });

describe.each(dbKinds())('a project token at its expiry, publishing on %s', (kind) => {
  let server: TestServer;
  /** The server's clock: a fixed instant when set, else the real time. */
  let clockMs: number | undefined;
  let token: string;
  /** The token's expiry, a whole second an hour from now. */
  let expiresAtMs: number;

  const publishAt = async (atMs: number, version: string) => {
    clockMs = atMs;
    try {
      return await server.request('POST', '/v1/repositories', { token, body: record(version) });
    } finally {
      clockMs = undefined;
    }
  };
  const stored = async (version: string) => {
    const res = await server.request('POST', '/v1/repositories/search', { body: { projectName: 'edge', artifact: { version } } });
    expect(res.status).toBe(200);
    return res.body.page.totalElements as number;
  };

  beforeAll(async () => {
    server = await startTestServer({ kind, now: () => new Date(clockMs ?? Date.now()) });
    const admin = await server.adminToken();
    const user = await server.request('POST', '/v1/users', { token: admin, body: { username: 'edge-ci', password: 'edge-ci-secret', projectName: 'edge', role: 'ROLE_USER' } });
    expect(user.status, user.text).toBe(201);
    expiresAtMs = (Math.floor(Date.now() / 1000) + 3600) * 1000;
    const made = await server.request('POST', '/v1/tokens', {
      token: admin,
      body: { name: 'edge-publish', scope: 'publish', userId: user.body.userId, expiresAt: new Date(expiresAtMs).toISOString() },
    });
    expect(made.status, made.text).toBe(201);
    token = made.body.token;
    // Used ten seconds before its expiry: its last use is then recent, and publishes take the
    // statement that checks the token itself (where the database kind has one).
    expect((await publishAt(expiresAtMs - 10_000, '1.0.0')).status).toBe(201);
    expect((await publishAt(expiresAtMs - 10_000, '1.0.1')).status).toBe(201);
  });
  afterAll(() => server?.close());

  it('publishes a millisecond before the expiry', async () => {
    expect((await publishAt(expiresAtMs - 1, '1.0.2')).status).toBe(201);
  });

  // Caught mutation: `t.expires_at > ?` made `>=` in the publish statement (dialects), or `<=` made `<` in the token lookup.
  it('refuses it at the exact instant of its expiry (401), writing nothing', async () => {
    const res = await publishAt(expiresAtMs, '1.0.3');
    expect(res.status, res.text).toBe(401);
    expect(res.body._message.message).toBe(`the project token "edge-publish" expired at ${new Date(expiresAtMs).toISOString()}: make a new one`);
    expect(await stored('1.0.3')).toBe(0);
  });

  // Caught mutation: `t.expires_at > ?` made `<` in the publish statement, or the expiry check left out.
  it('refuses it 5 s after its expiry by the server\'s clock (401), writing nothing', async () => {
    const res = await publishAt(expiresAtMs + 5_000, '1.0.4');
    expect(res.status, res.text).toBe(401);
    expect(res.body._message.message).toMatch(/^the project token "edge-publish" expired at /);
    expect(await stored('1.0.4')).toBe(0);
    expect(await stored('1.0.2')).toBe(1);
  });
});

describe.each(dbKinds())('the administrator still on the first password, on %s', (kind) => {
  let server: TestServer;
  let token: string;
  const otherId = '7b0c8f5e-4c1a-4d3b-9a55-2f7e0d6c1a11';

  beforeAll(async () => {
    server = await startTestServer({ kind, mustChangeAdminPassword: true });
    // Nobody can make a second user while the first password stands, so one is written as a
    // database left by an earlier server would hold it.
    await server.db('users').insert({
      id: otherId,
      username: 'other',
      password_hash: await bcrypt.hash('other-secret-1', 4),
      role: 'ROLE_USER',
      project_name: 'other',
      must_change_password: false,
      token_version: 0,
    });
    const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'admin', password: 'password' } });
    expect(login.status).toBe(200);
    expect(login.body.mustChangePassword).toBe(true);
    token = login.body.token;
  });
  afterAll(() => server?.close());

  // Caught mutation: the password route's `allowWhileMustChange` made `() => true` (users route).
  it('cannot reset another user\'s password (403), which keeps working', async () => {
    const res = await server.request('PUT', `/v1/users/${otherId}/password`, { token, body: { password: 'taken-over-1' } });
    expect(res.status, res.text).toBe(403);
    expect(res.body._message.message).toContain(`must change the initial password first: PUT /v1/users/${DEFAULT_ADMIN_ID}/password`);
    const unknown = await server.request('PUT', '/v1/users/00000000-0000-4000-8000-000000000000/password', { token, body: { password: 'taken-over-1' } });
    expect(unknown.status, unknown.text).toBe(403);
    const other = async (password: string) =>
      (await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'other', password } })).status;
    expect(await other('taken-over-1')).toBe(401);
    expect(await other('other-secret-1')).toBe(200);
  });

  // Caught mutation: `allowWhileMustChange` made `() => false`.
  it('can change its own, and then reset the other\'s', async () => {
    const own = await server.request('PUT', `/v1/users/${DEFAULT_ADMIN_ID}/password`, { token, body: { password: 'a-new-admin-secret' } });
    expect(own.status, own.text).toBe(200);
    const reset = await server.request('PUT', `/v1/users/${otherId}/password`, { token: own.body.token, body: { password: 'other-secret-2' } });
    expect(reset.status, reset.text).toBe(200);
  });
});

describe('the body limit of 1 MiB', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  /** A publish of exactly `bytes` bytes: JSON padded with spaces, which any JSON reader skips. */
  const bodyOf = (bytes: number, version: string) => {
    const json = JSON.stringify(record(version));
    return json.slice(0, -1) + ' '.repeat(bytes - Buffer.byteLength(json)) + '}';
  };

  /** Sends the body with Content-Length, or in chunks without it (`chunked`); the answer's status. */
  const send = (path: string, body: string, chunked: boolean, token: string) =>
    new Promise<number>((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` };
      if (!chunked) headers['Content-Length'] = Buffer.byteLength(body);
      const req = http.request(`${server.url}${path}`, { method: 'POST', headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      if (!chunked) return req.end(body);
      const buffer = Buffer.from(body);
      for (let at = 0; at < buffer.length; at += 64 * 1024) req.write(buffer.subarray(at, at + 64 * 1024));
      req.end();
    });

  // Caught mutations: `>` made `>=` on the Content-Length check, `<=` made `<` on the read bytes (body middleware).
  it.each([
    ['with Content-Length', false],
    ['in chunks', true],
  ])('accepts a publish of exactly 1 MiB and answers 413 to 1 MiB + 1 byte, %s', async (_how, chunked) => {
    const token = await server.adminToken();
    const exact = bodyOf(ONE_MIB, chunked ? '2.0.0' : '1.0.0');
    expect(Buffer.byteLength(exact)).toBe(ONE_MIB);
    expect(await send('/v1/repositories', exact, chunked, token)).toBe(201);
    expect(await send('/v1/repositories', bodyOf(ONE_MIB + 1, chunked ? '2.0.1' : '1.0.1'), chunked, token)).toBe(413);
    // The same limit on a route that reads its body through the usual pipeline.
    const search = JSON.stringify({ projectName: 'edge' });
    expect(await send('/v1/repositories/search', search.slice(0, -1) + ' '.repeat(ONE_MIB - search.length) + '}', chunked, token)).toBe(200);
    expect(await send('/v1/repositories/search', search.slice(0, -1) + ' '.repeat(ONE_MIB + 1 - search.length) + '}', chunked, token)).toBe(413);
  });
});
