// Tokens, the role table (docs/api.md, "Roles"), the must-change-password gate and brute-force limiting.
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { LOGIN_WINDOW_SECONDS } from '../../server/services/auth.js';
import { ADMIN_PASSWORD, DEFAULT_ADMIN_ID, type TestServer, startTestServer } from '../helpers/server.js';

const login = (server: TestServer, username: string, password: string, headers?: Record<string, string>) =>
  server.request('POST', '/v1/authentication/generate-token', { body: { username, password }, headers });

/**
 * A server clock that starts one second into a login window (LOGIN_WINDOW_SECONDS, aligned to the
 * epoch), so that the failures a test counts all fall into one window whenever the test runs.
 */
function clockAtWindowStart(): () => Date {
  const windowMs = LOGIN_WINDOW_SECONDS * 1000;
  const started = Date.now();
  const offset = Math.floor(started / windowMs) * windowMs + 1000 - started;
  return () => new Date(Date.now() + offset);
}

describe.each(dbKinds())('authentication on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let userId: string;
  let secret: string;

  beforeAll(async () => {
    server = await startTestServer({ kind, now: clockAtWindowStart() });
    admin = await server.adminToken();
    const created = await server.request('POST', '/v1/users', {
      token: admin,
      body: { username: 'proj-user', password: 'user-secret', projectName: 'proj', role: 'ROLE_USER' },
    });
    userId = created.body.userId;
    expect((await login(server, 'proj-user', 'user-secret')).status).toBe(200);
    secret = (await server.db('settings').where({ key: 'jwt_secret' }).first()).value;
  });
  afterAll(() => server?.close());

  it('issues a token with the claims of the specification', async () => {
    const res = await login(server, 'admin', ADMIN_PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      userId: DEFAULT_ADMIN_ID,
      username: 'admin',
      role: 'ROLE_ADMIN',
      projectName: null,
      mustChangePassword: false,
      expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const header = JSON.parse(Buffer.from(res.body.token.split('.')[0], 'base64url').toString());
    expect(header.alg).toBe('HS256');
    const claims = jwt.verify(res.body.token, secret, { algorithms: ['HS256'] }) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: 'admin', scopes: [{ authority: 'ROLE_ADMIN' }], iss: 'repoadmin', uid: DEFAULT_ADMIN_ID });
    expect(claims.exp).toBe((claims.iat as number) + 3600);
    expect(Date.parse(res.body.expiresAt)).toBe((claims.exp as number) * 1000);
  });

  it('answers 401 to wrong passwords and unknown users with the same message', async () => {
    const wrong = await login(server, 'proj-user', 'not-the-password');
    const unknown = await login(server, 'nobody-here', 'not-the-password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body._message).toEqual(unknown.body._message);
  });

  describe('rejects bad tokens with 401, never 500', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const claims = () => ({ sub: 'admin', scopes: [{ authority: 'ROLE_ADMIN' }], iss: 'repoadmin', iat: now(), exp: now() + 600, uid: DEFAULT_ADMIN_ID, tv: 0 });
    const cases: [string, () => string | Promise<string>][] = [
      ['expired', () => jwt.sign({ ...claims(), iat: now() - 7200, exp: now() - 3600 }, secret, { algorithm: 'HS256' })],
      ['tampered', () => { const [h, p, s] = admin.split('.'); const body = JSON.parse(Buffer.from(p!, 'base64url').toString()); body.sub = 'proj-user'; return `${h}.${Buffer.from(JSON.stringify(body)).toString('base64url')}.${s}`; }],
      ['wrong issuer', () => jwt.sign({ ...claims(), iss: 'someone-else' }, secret, { algorithm: 'HS256' })],
      ['alg none', () => `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`],
      ['HS512', () => jwt.sign(claims(), secret, { algorithm: 'HS512' })],
      ['another secret', () => jwt.sign(claims(), 'x'.repeat(40), { algorithm: 'HS256' })],
      ['uid not a uuid', () => jwt.sign({ ...claims(), uid: 'not-a-uuid' }, secret, { algorithm: 'HS256' })],
      ['uid with a NUL character', () => jwt.sign({ ...claims(), uid: `${DEFAULT_ADMIN_ID}\u0000` }, secret, { algorithm: 'HS256' })],
      ['no exp (it would never expire)', () => { const { exp: _exp, ...rest } = claims(); return jwt.sign(rest, secret, { algorithm: 'HS256' }); }],
      ['garbage', () => 'not.a.token'],
    ];
    it.each(cases)('%s', async (_name, make) => {
      const token = await make();
      for (const [method, path] of [['GET', '/v1/users/me'], ['GET', '/v1/users'], ['POST', '/v1/repositories/search']] as const) {
        const res = await server.request(method, path, { token, body: method === 'POST' ? {} : undefined });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.body._message.code).toBe('unauthorized');
      }
    });

    it('with a malformed Authorization header', async () => {
      const res = await server.request('GET', '/v1/users/me', { headers: { Authorization: `Token ${admin}` } });
      expect(res.status).toBe(401);
      const lower = await server.request('GET', '/v1/users/me', { headers: { Authorization: `bearer ${admin}` } });
      expect(lower.status).toBe(200);
    });

    it('from before a password change, and of a deleted user', async () => {
      const temp = await server.request('POST', '/v1/users', { token: admin, body: { username: 'temp-user', password: 'temp-secret', projectName: 'proj', role: 'ROLE_USER' } });
      const before = (await login(server, 'temp-user', 'temp-secret')).body.token;
      const changed = await server.request('PUT', `/v1/users/${temp.body.userId}/password`, { token: before, body: { password: 'temp-secret-2' } });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ userId: temp.body.userId, valid: true, token: expect.any(String), expiresAt: expect.any(String) });
      expect((await server.request('GET', '/v1/users/me', { token: before })).status).toBe(401);
      const fresh = changed.body.token;
      expect((await server.request('GET', '/v1/users/me', { token: fresh })).status).toBe(200);
      // An administrator's change of another user's password revokes that user's tokens too.
      await server.request('PUT', `/v1/users/${temp.body.userId}/password`, { token: admin, body: { password: 'temp-secret-3' } });
      expect((await server.request('GET', '/v1/users/me', { token: fresh })).status).toBe(401);
      const last = (await login(server, 'temp-user', 'temp-secret-3')).body.token;
      expect((await server.request('DELETE', `/v1/users/${temp.body.userId}`, { token: admin })).status).toBe(204);
      const gone = await server.request('GET', '/v1/users/me', { token: last });
      expect(gone.status).toBe(401);
    });
  });

  describe('the role table', () => {
    const publishBody = (projectName: string) => ({ projectName, branch: 'main', artifact: { groupId: 'roles', artifactId: 'a', version: `${projectName}-1` } });
    // [name, method, path, body, expected status for admin, user, no token]
    const table = (): [string, string, string, unknown, number, number, number][] => [
      ['create user', 'POST', '/v1/users', { username: `u${Math.random().toString(36).slice(2, 8)}`, password: 'role-secret', projectName: 'p', role: 'ROLE_USER' }, 201, 403, 401],
      ['list users', 'GET', '/v1/users', undefined, 200, 403, 401],
      ['delete user', 'DELETE', '/v1/users/00000000-0000-4000-8000-000000000000', undefined, 404, 403, 401],
      ['change another password', 'PUT', `/v1/users/${userId}/password`, { password: 'user-secret' }, 200, 200, 401],
      ['change admin password', 'PUT', `/v1/users/${DEFAULT_ADMIN_ID}/password`, { password: ADMIN_PASSWORD }, 200, 403, 401],
      ['publish own project', 'POST', '/v1/repositories', publishBody('proj'), 201, 200, 401],
      ['publish other project', 'POST', '/v1/repositories', publishBody('other'), 201, 403, 401],
      ['search', 'POST', '/v1/repositories/search', {}, 200, 200, 200],
      ['latest', 'GET', '/v1/repositories/latest?groupId=roles&artifactId=a', undefined, 404, 404, 404],
      ['get one', 'GET', '/v1/repositories/00000000-0000-4000-8000-000000000000', undefined, 404, 404, 404],
      ['who am i', 'GET', '/v1/users/me', undefined, 200, 200, 401],
    ];

    it.each(['admin', 'user', 'none'] as const)('as %s', async (who) => {
      for (const [name, method, path, body, asAdmin, asUser, asNone] of table()) {
        // Password changes revoke tokens: log in afresh for each row.
        const token = who === 'admin' ? (await login(server, 'admin', ADMIN_PASSWORD)).body.token : who === 'user' ? (await login(server, 'proj-user', 'user-secret')).body.token : undefined;
        const res = await server.request(method, path, { token, body });
        const expected = who === 'admin' ? asAdmin : who === 'user' ? asUser : asNone;
        expect(res.status, `${name} as ${who}: ${res.text}`).toBe(expected);
        if (res.status >= 400) expect(res.body._status).toBe(false);
      }
      // The password rows revoked earlier tokens: later tests need a fresh one.
      admin = (await login(server, 'admin', ADMIN_PASSWORD)).body.token;
    });
  });

  it('protects search, latest and get-one when REPO_MAN_SEARCH_PUBLIC=false, and opens them when true', async () => {
    const closed = await startTestServer({ kind, config: { searchPublic: false } });
    try {
      for (const [method, path] of [['POST', '/v1/repositories/search'], ['GET', '/v1/repositories/latest?groupId=g&artifactId=a'], ['GET', '/v1/repositories/00000000-0000-4000-8000-000000000000']] as const) {
        const anonymous = await closed.request(method, path);
        expect(anonymous.status, path).toBe(401);
        const withToken = await closed.request(method, path, { token: await closed.adminToken() });
        expect([200, 404], path).toContain(withToken.status);
      }
      expect((await closed.request('GET', '/health')).status).toBe(200);
      expect((await closed.request('GET', '/v1/openapi.json')).status).toBe(200);
    } finally {
      await closed.close();
    }
    expect((await server.request('POST', '/v1/repositories/search')).status).toBe(200);
  });

  it('rejects a password over 72 bytes, and one under 8, never truncating', async () => {
    const long = 'é'.repeat(37); // 74 bytes in UTF-8, 37 characters
    const res = await server.request('POST', '/v1/users', { token: admin, body: { username: 'long-pw', password: long, projectName: 'p', role: 'ROLE_USER' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ valid: false, userId: null, errors: [{ path: 'password', message: 'at most 72 bytes' }] });
    const short = await server.request('PUT', `/v1/users/${userId}/password`, { token: admin, body: { password: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ valid: false, userId, errors: [{ path: 'password', message: 'at least 8 bytes' }] });
    expect((await login(server, 'proj-user', 'user-secret')).status).toBe(200);
  });

  it('answers 429 with Retry-After after 10 failed logins for one name, even for the right password', async () => {
    await server.request('POST', '/v1/users', { token: admin, body: { username: 'victim', password: 'victim-secret', projectName: 'p', role: 'ROLE_USER' } });
    for (let i = 0; i < 10; i++) expect((await login(server, 'victim', `wrong-${i}`)).status).toBe(401);
    const blocked = await login(server, 'victim', 'victim-secret');
    expect(blocked.status).toBe(429);
    expect(blocked.body._message.code).toBe('rate_limited');
    const retryAfter = Number(blocked.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // Other names from the same address are not blocked by one name's failures.
    expect((await login(server, 'proj-user', 'user-secret')).status).toBe(200);
  });

  it('lets no more than 10 concurrent wrong passwords for one name through, however slow hashing is', async () => {
    // A cost that makes each comparison take a while: every attempt is in flight at once.
    const slow = await startTestServer({ kind, config: { bcryptCost: 10 }, now: clockAtWindowStart() });
    try {
      const token = await slow.adminToken();
      await slow.request('POST', '/v1/users', { token, body: { username: 'target', password: 'target-secret', projectName: 'p', role: 'ROLE_USER' } });
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => login(slow, 'target', `guess-${i}`)));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
      expect((await login(slow, 'target', 'target-secret')).status).toBe(429);
    } finally {
      await slow.close();
    }
  });

  it('lets many concurrent right passwords for one name in: only failures refuse', async () => {
    // Parallel pipeline steps logging in as one user, each comparison slow enough to overlap.
    const slow = await startTestServer({ kind, config: { bcryptCost: 10 }, now: clockAtWindowStart() });
    try {
      const token = await slow.adminToken();
      await slow.request('POST', '/v1/users', { token, body: { username: 'parallel-ci', password: 'parallel-secret', projectName: 'p', role: 'ROLE_USER' } });
      const answers = await Promise.all(Array.from({ length: 16 }, () => login(slow, 'parallel-ci', 'parallel-secret')));
      expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
      // Failures still count: ten wrong ones, then the right one is refused.
      for (let i = 0; i < 10; i++) expect((await login(slow, 'parallel-ci', `wrong-${i}`)).status).toBe(401);
      expect((await login(slow, 'parallel-ci', 'parallel-secret')).status).toBe(429);
    } finally {
      await slow.close();
    }
  });

  it('does not count attempts refused with 429 against the client address', async () => {
    const proxied = await startTestServer({ kind, config: { trustProxy: 1 }, now: clockAtWindowStart() });
    try {
      const from = (name: string, password: string) => login(proxied, name, password, { 'X-Forwarded-For': '198.51.100.9' });
      await proxied.request('POST', '/v1/users', { token: await proxied.adminToken(), body: { username: 'shared-ci', password: 'shared-secret', projectName: 'p', role: 'ROLE_USER' } });
      // One broken pipeline retries one name far past its limit...
      for (let i = 0; i < 120; i++) await from('broken-ci', 'wrong-password');
      // ...and the other pipelines behind the same address still log in.
      expect((await from('shared-ci', 'shared-secret')).status).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  it('resets the per-name count on a successful login', async () => {
    await server.request('POST', '/v1/users', { token: admin, body: { username: 'forgetful', password: 'forgetful-secret', projectName: 'p', role: 'ROLE_USER' } });
    for (let i = 0; i < 9; i++) await login(server, 'forgetful', 'wrong');
    expect((await login(server, 'forgetful', 'forgetful-secret')).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await login(server, 'forgetful', 'wrong')).status).toBe(401);
    expect((await login(server, 'forgetful', 'forgetful-secret')).status).toBe(200);
  });

  it('limits one client address to 100 failures, per X-Forwarded-For entry of the trusted proxies (two here)', async () => {
    const proxied = await startTestServer({ kind, config: { trustProxy: 2 }, now: clockAtWindowStart() });
    try {
      const from = (ip: string, name: string) => login(proxied, name, 'wrong-password', { 'X-Forwarded-For': `${ip}, 10.0.0.1` });
      for (let i = 0; i < 100; i++) await from('203.0.113.7', `name-${i % 50}`);
      const blocked = await login(proxied, 'admin', ADMIN_PASSWORD, { 'X-Forwarded-For': '203.0.113.7, 10.0.0.1' });
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('Retry-After'))).toBeGreaterThan(0);
      const other = await login(proxied, 'admin', ADMIN_PASSWORD, { 'X-Forwarded-For': '203.0.113.8, 10.0.0.1' });
      expect(other.status).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  it('counts the address the trusted proxy saw: entries the client wrote itself cannot move it', async () => {
    const proxied = await startTestServer({ kind, config: { trustProxy: 1 }, now: clockAtWindowStart() });
    try {
      // The proxy appends the address it was reached from (203.0.113.50); the client varies what it writes before it.
      for (let i = 0; i < 100; i++) {
        await login(proxied, `name-${i % 50}`, 'wrong-password', { 'X-Forwarded-For': `198.51.100.${i % 250}, 203.0.113.50` });
      }
      const blocked = await login(proxied, 'admin', ADMIN_PASSWORD, { 'X-Forwarded-For': '192.0.2.1, 203.0.113.50' });
      expect(blocked.status).toBe(429);
      // Nor can a client name another's address to lock it out: 203.0.113.50 written by 203.0.113.51.
      const framed = await login(proxied, 'admin', ADMIN_PASSWORD, { 'X-Forwarded-For': '203.0.113.50, 203.0.113.51' });
      expect(framed.status).toBe(200);
    } finally {
      await proxied.close();
    }
  });
});

describe('the first administrator', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ mustChangeAdminPassword: true });
  });
  afterAll(() => server?.close());

  it('must change its documented password before anything else', async () => {
    const res = await login(server, 'admin', 'password');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ userId: DEFAULT_ADMIN_ID, mustChangePassword: true, projectName: null });
    const token = res.body.token;
    const blocked = await server.request('GET', '/v1/users', { token });
    expect(blocked.status).toBe(403);
    expect(blocked.body._message.message).toContain(`/v1/users/${DEFAULT_ADMIN_ID}/password`);
    const publish = await server.request('POST', '/v1/repositories', { token, body: { projectName: 'p', branch: 'b', artifact: { groupId: 'g', artifactId: 'a', version: '1' } } });
    expect(publish.status).toBe(403);
    // Public endpoints ignore the gate.
    expect((await server.request('POST', '/v1/repositories/search', { token, body: {} })).status).toBe(200);
    expect((await server.request('GET', '/v1/users/me', { token })).body.mustChangePassword).toBe(true);

    const changed = await server.request('PUT', `/v1/users/${DEFAULT_ADMIN_ID}/password`, { token, body: { password: 'a-new-admin-secret' } });
    expect(changed.status).toBe(200);
    expect((await server.request('GET', '/v1/users', { token: changed.body.token })).status).toBe(200);
    expect((await login(server, 'admin', 'password')).status).toBe(401);
    const me = await server.request('GET', '/v1/users/me', { token: changed.body.token });
    expect(me.body).toEqual({ userId: DEFAULT_ADMIN_ID, username: 'admin', projectName: null, role: 'ROLE_ADMIN', mustChangePassword: false });
  });
});

describe('the first administrator, naming itself with its id in upper case', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ mustChangeAdminPassword: true });
  });
  afterAll(() => server?.close());

  it('may still change its own password: ids are the same whatever their letter case', async () => {
    const token = (await login(server, 'admin', 'password')).body.token;
    const changed = await server.request('PUT', `/v1/users/${DEFAULT_ADMIN_ID.toUpperCase()}/password`, { token, body: { password: 'a-new-admin-secret' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ userId: DEFAULT_ADMIN_ID, valid: true, token: expect.any(String) });
    expect((await server.request('GET', '/v1/users', { token: changed.body.token })).status).toBe(200);
  });
});
