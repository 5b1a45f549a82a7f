// The client against a small real HTTP server that answers what each test scripts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { needsFreshLogin } from '../../common/errors.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ConfigStore, POSITION_KEPT_MS, fileConfig, memoryConfig } from '../config/store.js';
import { DEFAULT_SETTINGS, type Settings } from '../deps.js';
import { createApi, timeoutFrom } from './client.js';

/** `raw` is sent as it is, for answers that are not JSON. */
type Handler = (req: http.IncomingMessage, body: string) => { status: number; body?: unknown; raw?: string; headers?: Record<string, string> };
const servers: http.Server[] = [];

interface Recorded {
  method: string;
  url: string;
  auth?: string;
  body: string;
  position?: string;
}

async function serve(handler: Handler): Promise<{ url: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const position = req.headers['x-repoadmin-position'] as string | undefined;
      requests.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body, ...(position ? { position } : {}) });
      const answer = handler(req, body);
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.raw ?? (answer.body === undefined ? '' : JSON.stringify(answer.body)));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

function api(url: string, options: { env?: NodeJS.ProcessEnv; settings?: Partial<Settings>; config?: ConfigStore; log?: string[] } = {}) {
  return createApi({
    settings: { ...DEFAULT_SETTINGS, url, ...options.settings },
    env: options.env ?? {},
    now: () => new Date('2026-11-21T10:00:00.000Z'),
    config: options.config ?? memoryConfig(),
    log: options.log ? (line) => options.log!.push(line) : undefined,
    retryDelayMs: 1,
  });
}

const errorBody = (code: string, message: string) => ({ _status: false, _message: { category: 'ERROR', code, message } });
const emptyPage = { versionInformation: [], page: { totalElements: 0, totalPages: 0, currentPage: 1, numberOfElements: 0 } };

describe('API client', () => {
  it("sends a write's position with the reads that follow, from another run too, for a minute", async () => {
    const server = await serve((req) =>
      req.method === 'POST' && req.url === '/v1/repositories'
        ? { status: 201, body: { uid: '7f1c0a52-1e0e-4f8e-9d0b-2f1a3c4d5e6f', created: true }, headers: { 'X-Repoadmin-Position': '0/3000148' } }
        : { status: 200, body: emptyPage },
    );
    const dir = mkdtempSync(path.join(os.tmpdir(), 'repoadmin-positions-'));
    try {
      const env = { REPOADMIN_TOKEN: 't', REPOADMIN_CONFIG_DIR: dir };
      const record = { projectName: 'p', branch: 'main', artifact: { groupId: 'g', artifactId: 'a', version: '1' } };
      // Before any write there is nothing to send.
      await api(server.url, { env, config: fileConfig(env) }).search({});
      await api(server.url, { env, config: fileConfig(env) }).publish(record);
      // The next command of the pipeline is another process: the position comes from the config folder.
      await api(server.url, { env, config: fileConfig(env) }).search({ latestVersion: true });
      expect(server.requests.map((r) => [r.method, r.url.split('?')[0], r.position])).toEqual([
        ['POST', '/v1/repositories/search', undefined],
        ['POST', '/v1/repositories', undefined],
        ['POST', '/v1/repositories/search', '0/3000148'],
      ]);
      // A position kept more than a minute ago is not sent.
      const kept = JSON.parse(readFileSync(path.join(dir, 'positions.json'), 'utf8')) as Record<string, { at: number }>;
      kept[server.url]!.at -= POSITION_KEPT_MS;
      writeFileSync(path.join(dir, 'positions.json'), JSON.stringify(kept));
      await api(server.url, { env, config: fileConfig(env) }).search({});
      expect(server.requests.at(-1)!.position).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("turns the server's error body back into the same AppError", async () => {
    const server = await serve(() => ({ status: 409, body: errorBody('conflict', 'user name taken') }));
    await expect(api(server.url, { env: { REPOADMIN_TOKEN: 't' } }).createUser({ username: 'x', password: 'p', projectName: 'p', role: 'ROLE_USER' })).rejects.toMatchObject({
      code: 'conflict',
      message: 'user name taken',
    });
    expect(server.requests).toHaveLength(1);
  });

  it("keeps the reason of a 401 whose token was accepted, and the server's own message with it", async () => {
    const refusal = { ...errorBody('unauthorized', 'making a project token needs a fresh login'), reason: 'fresh_login_required' };
    const server = await serve(() => ({ status: 401, body: refusal }));
    const config = memoryConfig();
    await config.save({ url: server.url, username: 'admin', userId: 'u', token: 'stored', expiresAt: '2030-01-01T00:00:00.000Z' });
    const error = await api(server.url, { config }).createToken({ name: 'ci', scope: 'read', expiresAt: null }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unauthorized', message: 'making a project token needs a fresh login', details: { reason: 'fresh_login_required' } });
    expect(needsFreshLogin(error)).toBe(true);
    // A 401 without a reason is about the token, and says so; an unknown reason is dropped.
    const other = await serve(() => ({ status: 401, body: { ...errorBody('unauthorized', 'the token was revoked'), reason: 'something-new' } }));
    await config.save({ url: other.url, username: 'admin', userId: 'u', token: 'stored', expiresAt: '2030-01-01T00:00:00.000Z' });
    const plain = await api(other.url, { config }).createToken({ name: 'ci', scope: 'read', expiresAt: null }).catch((e: unknown) => e);
    expect(plain).toMatchObject({ code: 'unauthorized', message: `your session on ${other.url} is no longer valid (the token was revoked): run repoadmin login` });
    expect(needsFreshLogin(plain)).toBe(false);
  });

  it('retries idempotent calls on 503 and not the others', async () => {
    let calls = 0;
    const server = await serve((req) => {
      calls++;
      if (req.url!.startsWith('/v1/repositories/search') && calls < 3) return { status: 503, body: errorBody('unavailable', 'database down') };
      if (req.url!.startsWith('/v1/repositories/search')) return { status: 200, body: emptyPage };
      return { status: 503, body: errorBody('unavailable', 'database down') };
    });
    const client = api(server.url, { env: { REPOADMIN_TOKEN: 't' } });
    await expect(client.search({ groupId: 'g' })).resolves.toEqual(emptyPage);
    expect(calls).toBe(3);
    await expect(client.deleteUser('x')).rejects.toMatchObject({ code: 'unavailable' });
    expect(calls).toBe(4);
  });

  it('https to a server that speaks http: unreachable at once (no retries), saying so', async () => {
    const server = await serve(() => ({ status: 200, body: emptyPage }));
    const log: string[] = [];
    const https = server.url.replace(/^http:/, 'https:');
    await expect(api(https, { log }).search({ groupId: 'g' })).rejects.toMatchObject({
      code: 'unreachable',
      message: expect.stringMatching(/^cannot reach https:\/\/127\.0\.0\.1:\d+ \((EPROTO|ERR_SSL_WRONG_VERSION_NUMBER)\): no TLS on the other side: does the server speak http rather than https\?$/),
    });
    expect(log.filter((line) => line.startsWith('retrying'))).toEqual([]);
  });

  it('a refused connection is unreachable, with what to do', async () => {
    const server = await serve(() => ({ status: 200 }));
    await new Promise((resolve) => servers.pop()!.close(resolve));
    await expect(api(server.url).search({})).rejects.toMatchObject({
      code: 'unreachable',
      message: `cannot reach ${server.url} (connection refused). Is the server running? Start one with: repoadmin server`,
    });
  });

  it('an answer without our error body falls back on its status', async () => {
    const server = await serve(() => ({ status: 502, body: 'bad gateway' }));
    await expect(api(server.url).search({})).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('502') });
  });

  it('sends the stored token only to the server that issued it', async () => {
    const server = await serve(() => ({ status: 200, body: { userId: 'u', username: 'admin', projectName: null, role: 'ROLE_ADMIN', mustChangePassword: false } }));
    const config = memoryConfig();
    await config.save({ url: 'http://other.example:9090', username: 'admin', userId: 'u', token: 'token-of-other', expiresAt: '2030-01-01T00:00:00.000Z' });
    await expect(api(server.url, { config }).me()).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringContaining(`not logged in to ${server.url}`) });
    await config.save({ url: server.url, username: 'admin', userId: 'u', token: 'token-of-this', expiresAt: '2030-01-01T00:00:00.000Z' });
    await api(server.url, { config }).me();
    expect(server.requests.map((r) => r.auth)).toEqual(['Bearer token-of-this']);
  });

  it('environment credentials win over a stored token and log in on the fly', async () => {
    const server = await serve((req) =>
      req.url === '/v1/authentication/generate-token'
        ? { status: 200, body: { token: 'fly.token', userId: 'u', expiresAt: '2026-11-21T11:00:00.000Z', username: 'ci', role: 'ROLE_USER', projectName: 'shop', mustChangePassword: false } }
        : { status: 200, body: { userId: 'u', username: 'ci', projectName: 'shop', role: 'ROLE_USER', mustChangePassword: false } },
    );
    const config = memoryConfig();
    await config.save({ url: server.url, username: 'admin', userId: 'a', token: 'stored', expiresAt: '2030-01-01T00:00:00.000Z' });
    const log: string[] = [];
    await api(server.url, { config, env: { REPOADMIN_USERNAME: 'ci', REPOADMIN_PASSWORD: 'pipeline-pass' }, log }).me();
    expect(server.requests.map((r) => r.auth)).toEqual([undefined, 'Bearer fly.token']);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ username: 'ci', password: 'pipeline-pass' });
    expect(log.join('\n')).not.toContain('pipeline-pass');
    expect(log.join('\n')).not.toContain('fly.token');
    expect(log.join('\n')).toContain('Bearer fly.to…(9 chars)');
  });

  it("knows the user's project from a login on the fly, and from a stored login, without asking", async () => {
    const server = await serve(() => ({
      status: 200,
      body: { token: 'fly.token', userId: 'u', expiresAt: '2026-11-21T11:00:00.000Z', username: 'ci', role: 'ROLE_USER', projectName: 'shop', mustChangePassword: false },
    }));
    await expect(api(server.url, { env: { REPOADMIN_USERNAME: 'ci', REPOADMIN_PASSWORD: 'pipeline-pass' } }).projectName()).resolves.toBe('shop');
    expect(server.requests.map((r) => r.url)).toEqual(['/v1/authentication/generate-token']);

    const config = memoryConfig();
    await config.save({ url: server.url, username: 'admin', userId: 'a', token: 'stored', expiresAt: '2030-01-01T00:00:00.000Z', projectName: null, role: 'ROLE_ADMIN' });
    await expect(api(server.url, { config }).projectName()).resolves.toBeNull();
    expect(server.requests).toHaveLength(1);
  });

  it("asks a login stored without the project once, keeps the answer, and keeps nothing of a token from the environment", async () => {
    const server = await serve(() => ({ status: 200, body: { userId: 'u', username: 'ci', projectName: 'shop', role: 'ROLE_USER', mustChangePassword: false } }));
    const config = memoryConfig();
    const older = { url: server.url, username: 'ci', userId: 'u', token: 'stored', expiresAt: '2030-01-01T00:00:00.000Z' };
    await config.save(older);
    await config.save({ ...older, url: 'http://other.example:9090', token: 'other' });
    await expect(api(server.url, { config }).projectName()).resolves.toBe('shop');
    await expect(api(server.url, { config }).projectName()).resolves.toBe('shop');
    expect(server.requests.map((r) => `${r.method} ${r.url} ${r.auth}`)).toEqual(['GET /v1/users/me Bearer stored']);
    expect(config.data()).toEqual({
      current: 'http://other.example:9090',
      servers: { [server.url]: { ...older, projectName: 'shop', role: 'ROLE_USER' }, 'http://other.example:9090': { ...older, url: 'http://other.example:9090', token: 'other' } },
    });

    const fresh = memoryConfig();
    await expect(api(server.url, { config: fresh, env: { REPOADMIN_TOKEN: 'rpa_x' } }).projectName()).resolves.toBe('shop');
    expect(server.requests).toHaveLength(2);
    expect(fresh.data()).toEqual({ servers: {} });
  });

  it('an expired stored token without credentials says the session expired', async () => {
    const config = memoryConfig();
    await config.save({ url: 'http://127.0.0.1:9', username: 'admin', userId: 'a', token: 'old', expiresAt: '2026-11-21T09:59:59.000Z' });
    await expect(api('http://127.0.0.1:9', { config }).me()).rejects.toMatchObject({ code: 'unauthorized', message: 'your session expired: run repoadmin login' });
  });

  it('a public search sends no expired token and logs in only when the server asks for one', async () => {
    const server = await serve((req) => {
      if (req.url === '/v1/authentication/generate-token') return { status: 200, body: { token: 'fly', userId: 'u', expiresAt: 'x', username: 'ci', role: 'ROLE_USER', projectName: 'p', mustChangePassword: false } };
      return req.headers.authorization ? { status: 200, body: emptyPage } : { status: 401, body: errorBody('unauthorized', 'a token is required') };
    });
    await api(server.url, { env: { REPOADMIN_USERNAME: 'ci', REPOADMIN_PASSWORD: 'pw-pw-pw-pw' } }).search({});
    expect(server.requests.map((r) => [r.url.split('?')[0], r.auth])).toEqual([
      ['/v1/repositories/search', undefined],
      ['/v1/authentication/generate-token', undefined],
      ['/v1/repositories/search', 'Bearer fly'],
    ]);
  });

  it('a rejected token says what to check', async () => {
    const server = await serve(() => ({ status: 401, body: errorBody('unauthorized', 'invalid token') }));
    await expect(api(server.url, { env: { REPOADMIN_TOKEN: 'bad' } }).listUsers()).rejects.toMatchObject({
      code: 'unauthorized',
      message: `${server.url} rejected the token (invalid token): check REPOADMIN_TOKEN`,
    });
  });

  it('a token that a public search is refused with says what to check', async () => {
    const server = await serve(() => ({ status: 401, body: errorBody('unauthorized', 'the token is not valid') }));
    await expect(api(server.url, { env: { REPOADMIN_TOKEN: 'bad' } }).search({})).rejects.toMatchObject({
      code: 'unauthorized',
      message: `${server.url} rejected the token (the token is not valid): check REPOADMIN_TOKEN`,
    });
    const config = memoryConfig();
    await config.save({ url: server.url, username: 'admin', userId: 'a', token: 'revoked', expiresAt: '2030-01-01T00:00:00.000Z' });
    await expect(api(server.url, { config }).search({})).rejects.toMatchObject({
      code: 'unauthorized',
      message: expect.stringMatching(/no longer valid .*: run repoadmin login$/),
    });
  });

  it('a 404 without our error body is no registry at that address, not "nothing found"', async () => {
    const server = await serve(() => ({ status: 404, raw: '<html>Not Found</html>', headers: { 'content-type': 'text/html' } }));
    await expect(api(server.url).search({ latestVersion: true })).rejects.toMatchObject({
      code: 'unreachable',
      message: expect.stringMatching(/404 Not Found .*Check --url or REPOADMIN_URL/),
    });
  });

  it('an answer that is not JSON says the address may not be a registry', async () => {
    const server = await serve(() => ({ status: 200, raw: '<html>welcome</html>', headers: { 'content-type': 'text/html' } }));
    await expect(api(server.url).search({})).rejects.toMatchObject({
      code: 'unreachable',
      message: `${server.url} did not answer with JSON (text/html): is it a repoadmin server? Check --url or REPOADMIN_URL`,
    });
  });
});

describe('promote', () => {
  const promotion = { id: 'p-1', uid: 'v-1', environment: 'prod', previousUid: null, rollback: false };
  it.each([
    [201, true],
    [200, false],
  ])('reads the status %i as promoted: %s (200: the version was current there already)', async (status, promoted) => {
    const { url, requests } = await serve(() => ({ status, body: promotion }));
    const answer = await api(url, { env: { REPOADMIN_TOKEN: 't' } }).promote({ uid: 'v-1', environment: 'prod' });
    expect(answer).toEqual({ promotion, promoted });
    expect(requests.map((r) => [r.method, r.url, JSON.parse(r.body)])).toEqual([['POST', '/v1/promotions', { uid: 'v-1', environment: 'prod' }]]);
  });
});

describe('REPOADMIN_TIMEOUT', () => {
  it('is seconds, a fraction allowed; unset or empty is 30 s; anything else is a usage error naming it', () => {
    expect(timeoutFrom({})).toBe(30_000);
    expect(timeoutFrom({ REPOADMIN_TIMEOUT: '' })).toBe(30_000);
    expect(timeoutFrom({ REPOADMIN_TIMEOUT: '90' })).toBe(90_000);
    expect(timeoutFrom({ REPOADMIN_TIMEOUT: '0.5' })).toBe(500);
    expect(timeoutFrom({ REPOADMIN_TIMEOUT: '2147483' })).toBe(2_147_483_000);
    for (const given of ['abc', '0', '-5', '1e3', '3000000']) {
      expect(() => timeoutFrom({ REPOADMIN_TIMEOUT: given })).toThrow(
        expect.objectContaining({ code: 'usage', message: `REPOADMIN_TIMEOUT must be a number of seconds from 0.001 to 2147483, not "${given}"` }),
      );
    }
  });
});
