// Hostile input found by review (issue 11): credentials in every kind of repository address, control
// characters and the documented first password as passwords, forged X-Forwarded-For, clients that
// hang up in the middle of a body.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { dbKinds } from '../helpers/db.js';
import { ADMIN_PASSWORD, DEFAULT_ADMIN_ID, type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('hostile input on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer({ kind, config: { trustProxy: 1 } });
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  it.each([
    ['https://ci:s3cr3t@git.acme.test/a.git', 'https://git.acme.test/a.git'],
    ['ssh://git:s3cr3t@git.acme.test/team/a.git', 'ssh://git.acme.test/team/a.git'],
    ['git://anon:s3cr3t@git.acme.test/a.git', 'git://git.acme.test/a.git'],
    ['git+ssh://deploy:s3cr3t@git.acme.test:2222/a.git', 'git+ssh://git.acme.test:2222/a.git'],
    ['ssh://deploy:p@ss@word@git.acme.test/a.git', 'ssh://git.acme.test/a.git'],
  ])('stores %s without its user info, and search never shows it', async (address, stored) => {
    const artifactId = `creds-${Buffer.from(address).toString('hex').slice(0, 24)}`;
    const res = await server.request('POST', '/v1/repositories', {
      token: admin,
      body: { projectName: 'p', branch: 'main', artifact: { groupId: 'creds', artifactId, version: '1' }, repositoryUrl: address },
    });
    expect(res.status).toBe(201);
    const found = await server.request('POST', '/v1/repositories/search', { body: { artifactId } });
    expect(found.body.versionInformation[0].repositoryUrl).toBe(stored);
    expect(found.text).not.toContain('s3cr3t');
    const row = await server.db('versions').where({ artifact_id: artifactId }).first();
    expect(row.repository_url).toBe(stored);
  });

  it.each([
    ['only NUL characters', '\u0000'.repeat(8)],
    ['a NUL inside', 'abcd\u0000efgh'],
    ['a line feed', 'abcdefgh\n'],
    ['an escape', 'abc\u001bdefgh'],
    ['a DEL', 'abcdefgh\u007f'],
  ])('refuses a password with %s (400), on create and on change', async (_name, password) => {
    const create = await server.request('POST', '/v1/users', { token: admin, body: { username: 'ctl-user', password, projectName: 'p', role: 'ROLE_USER' } });
    expect(create.status).toBe(400);
    expect(create.body).toMatchObject({ valid: false, errors: [{ path: 'password', message: 'must not contain control characters' }] });
    const change = await server.request('PUT', `/v1/users/${DEFAULT_ADMIN_ID}/password`, { token: admin, body: { password } });
    expect(change.status).toBe(400);
    expect(change.body.errors).toEqual([{ path: 'password', message: 'must not contain control characters' }]);
  });

  it('never lets a run of NUL characters log in', async () => {
    for (const password of ['\u0000'.repeat(8), '\u0000'.repeat(20)]) {
      const res = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'admin', password } });
      expect(res.status).toBe(400);
    }
  });

  it('refuses the documented first password on a password change', async () => {
    const res = await server.request('PUT', `/v1/users/${DEFAULT_ADMIN_ID}/password`, { token: admin, body: { password: 'password' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ valid: false, userId: DEFAULT_ADMIN_ID, errors: [{ path: 'password', message: 'must not be the documented first password "password"' }] });
    const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    expect(login.status).toBe(200);
    expect(login.body.mustChangePassword).toBe(false);
  });

  it('ignores an X-Forwarded-For that is not an address: no 500, and no lock-out of the user', async () => {
    const forged = { 'X-Forwarded-For': 'x'.repeat(300) };
    const login = (password: string, headers: Record<string, string>) =>
      server.request('POST', '/v1/authentication/generate-token', { body: { username: 'admin', password }, headers });
    const first = await login('wrong-password', forged);
    expect(first.status).toBe(401);
    for (let i = 0; i < 10; i++) {
      const res = await login(ADMIN_PASSWORD, { 'X-Forwarded-For': `${'y'.repeat(260 + i)}, 10.0.0.1` });
      expect(res.status).toBe(200);
    }
    expect((await login(ADMIN_PASSWORD, { 'X-Forwarded-For': '203.0.113.50' })).status).toBe(200);
    // The forged headers were counted against the socket's address, not a made-up one.
    const addresses = await server.db('login_attempts').where({ scope: 'address' }).pluck('subject');
    expect(addresses.every((a: string) => a.length <= 45)).toBe(true);
  });

  it('counts an X-Forwarded-For address with an IPv6 zone as the address without it: no 500, one count', async () => {
    const login = (zone: string) =>
      server.request('POST', '/v1/authentication/generate-token', {
        body: { username: 'zone-nobody', password: 'wrong-password' },
        headers: { 'X-Forwarded-For': `fe80::1%${zone}` },
      });
    expect((await login('a'.repeat(300))).status).toBe(401);
    expect((await login('1')).status).toBe(401);
    expect((await login('2')).status).toBe(401);
    const rows = await server.db('login_attempts').where({ scope: 'address', subject: 'fe80::1' });
    expect(rows.map((r: { failures: number }) => Number(r.failures))).toEqual([3]);
    expect(await server.db('login_attempts').where('subject', 'like', 'fe80::1%%')).toHaveLength(1);
  });

  it('refuses a login password longer than 72 bytes even when its first 72 are right', async () => {
    const password = 'L'.repeat(72);
    const created = await server.request('POST', '/v1/users', { token: admin, body: { username: 'long-pass', password, projectName: 'p', role: 'ROLE_USER' } });
    expect(created.status).toBe(201);
    const login = (given: string) => server.request('POST', '/v1/authentication/generate-token', { body: { username: 'long-pass', password: given } });
    expect((await login(password)).status).toBe(200);
    const longer = await login(`${password}anything-else`);
    expect(longer.status).toBe(401);
    expect(longer.body._message.message).toBe('wrong user name or password');
    expect((await login(`${password}\u00e9`)).status).toBe(401);
  });

  it('takes a user id in upper case as the same id, on every database', async () => {
    const created = await server.request('POST', '/v1/users', { token: admin, body: { username: 'upper-id', password: 'upper-id-secret', projectName: 'p', role: 'ROLE_USER' } });
    const id: string = created.body.userId;
    const own = (await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'upper-id', password: 'upper-id-secret' } })).body.token;
    // Their own password, by their own id in upper case: a fresh token, as for the id as given.
    const changed = await server.request('PUT', `/v1/users/${id.toUpperCase()}/password`, { token: own, body: { password: 'upper-id-secret-2' } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ userId: id, valid: true, token: expect.any(String) });
    expect((await server.request('GET', '/v1/users/me', { token: changed.body.token })).status).toBe(200);
    // An error names the user in lower case too.
    const refused = await server.request('PUT', `/v1/users/${id.toUpperCase()}/password`, { token: changed.body.token, body: { password: 'short' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ valid: false, userId: id });
    const deleted = await server.request('DELETE', `/v1/users/${id.toUpperCase()}`, { token: admin });
    expect(deleted.status, deleted.text).toBe(204);
    expect(await server.db('users').where({ username: 'upper-id' })).toEqual([]);
  });

  it('treats a client that hangs up in the middle of a body as the client\'s doing: no error logged, no 503', async () => {
    const { port } = new URL(server.url);
    const publishLines = () => server.logs.filter((l) => l.includes('"path":"/v1/repositories"') && l.includes('"method":"POST"'));
    const before = publishLines().length;
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /v1/repositories HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${admin}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"projectName": "half',
        );
        setTimeout(() => socket.destroy(), 200);
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    // The server logs the request once it has given up on it.
    await expect.poll(() => publishLines().length, { timeout: 5000 }).toBeGreaterThan(before);
    const line = publishLines()[before]!;
    expect(JSON.parse(line).status).toBe(400);
    expect(server.logs.filter((l) => l.includes('"level":50'))).toEqual([]);
  });

  it('answers a chunked body over 1 MiB with 413 and then the next request on the same connection', async () => {
    const { port } = new URL(server.url);
    // Two requests in one go: a publish whose chunked body grows past the limit, then a health check.
    const chunk = `{"description":"${'x'.repeat(64 * 1024)}`;
    const chunks = Array.from({ length: 20 }, () => `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`).join('');
    const requests =
      `POST /v1/repositories HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${admin}\r\n` +
      `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n` +
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n';
    const answered = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(requests));
      socket.setEncoding('latin1');
      socket.on('data', (data: string) => (text += data));
      // The server ends the connection after the health check (Connection: close), or resets it.
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
      setTimeout(() => reject(new Error(`no end of the connection; read so far: ${text.slice(0, 200)}`)), 20_000).unref();
    });
    // The second status line follows the first answer's body directly.
    const statuses = [...answered.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    expect(statuses, answered).toEqual(['413', '200']);
    expect(answered).toContain('"payload_too_large"');
  }, 30_000);
});

describe('the first administrator password setting', () => {
  it('refuses REPO_MAN_ADMIN_PASSWORD=password, and control characters', () => {
    expect(() => loadConfig([], { REPO_MAN_ADMIN_PASSWORD: 'password' })).toThrow(
      'REPO_MAN_ADMIN_PASSWORD breaks the password rules: must not be the documented first password "password"',
    );
    expect(() => loadConfig([], { REPO_MAN_ADMIN_PASSWORD: 'admin\u0000password' })).toThrow('must not contain control characters');
  });
});
