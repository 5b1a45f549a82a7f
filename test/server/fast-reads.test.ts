// The latest lookup and the search answered before Koa (server/fast-reads.ts) answer exactly as the
// Koa routes do. A request with a token goes to Koa, the same request without one takes the fast
// path: the two answers are compared, then the metrics and access log lines of the fast path.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastReads } from '../../server/fast-reads.js';
import { createLogger } from '../../server/log.js';
import type { Services } from '../../server/services/context.js';
import { dbKinds } from '../helpers/db.js';
import { type TestResponse, type TestServer, startTestServer } from '../helpers/server.js';

const record = (artifactId: string, version: string, latestVersion: boolean) => ({
  projectName: 'alpha',
  branch: 'main',
  artifact: { groupId: 'com.fast', artifactId, version },
  repositoryUrl: 'https://git.acme.test/alpha/core.git',
  creationDate: '2020-01-02T03:04:05.678+0000',
  type: 'LIBRARY',
  latestVersion,
  description: null,
});

/** What must be the same on both paths. */
const answer = (res: TestResponse) => ({
  status: res.status,
  body: res.body,
  type: res.headers.get('content-type'),
  length: res.headers.get('content-length'),
  retryAfter: res.headers.get('retry-after'),
});

describe.each(dbKinds())('fast reads on %s', (kind) => {
  let server: TestServer;
  let admin: string;

  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
    for (const [artifactId, version, latest] of [
      ['one', '1.0.0', false],
      ['one', '1.1.0', true],
      ['two', '2.0.0-SNAPSHOT', true],
      ['two', '1.9.0', false],
    ] as const) {
      const res = await server.request('POST', '/v1/repositories', { token: admin, body: record(artifactId, version, latest) });
      expect(res.status).toBe(201);
    }
  });
  afterAll(() => server?.close());

  const requests: [string, string, unknown?, Record<string, string>?][] = [
    ['GET', '/v1/repositories/latest?groupId=com.fast&artifactId=one&branch=main'],
    ['GET', '/v1/repositories/latest?groupId=com.fast&artifactId=one&projectName=alpha'],
    ['GET', '/v1/repositories/latest?groupId=com.fast&artifactId=missing'],
    ['GET', '/v1/repositories/latest?groupId=com.fast'],
    ['GET', '/v1/repositories/latest?groupId=com.fast&groupId=com.fast&artifactId=one'],
    ['POST', '/v1/repositories/search', { groupId: 'com.fast' }],
    ['POST', '/v1/repositories/search?size=1&page=2&sortField=version&sortDirection=desc', { groupId: 'com.fast' }],
    ['POST', '/v1/repositories/search?aPage=0&aSize=3', { artifact: { groupId: 'com.fast', artifactId: 't*' }, latestVersion: true }],
    ['POST', '/v1/repositories/search', undefined],
    ['POST', '/v1/repositories/search?size=0', { groupId: 'com.fast' }],
    ['POST', '/v1/repositories/search', { groupId: 7 }],
    ['POST', '/v1/repositories/search', '{"groupId": ', { 'Content-Type': 'application/json' }],
    ['POST', '/v1/repositories/search', '[1]', { 'Content-Type': 'application/json' }],
    ['POST', '/v1/repositories/search', 'groupId=com.fast', { 'Content-Type': 'text/plain' }],
  ];

  it.each(requests)('%s %s answers the same without a token (fast) as with one (Koa)', async (method, path, body, headers) => {
    const raw = typeof body === 'string';
    const send = async (token?: string) => {
      if (!raw) return server.request(method, path, { body, token, headers });
      const response = await fetch(server.url + path, {
        method,
        headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body,
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: JSON.parse(text), text } as TestResponse;
    };
    const [fast, koa] = [await send(), await send(admin)];
    expect(answer(fast)).toEqual(answer(koa));
    expect(fast.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('takes plain reads and leaves a token, a non-JSON body, an invalid or repeated parameter and other routes to Koa', async () => {
    const s = { db: server.db, config: server.config, log: createLogger('silent'), now: () => new Date() } as Services;
    const fast = fastReads(s, undefined, { failed() {} });
    // 599: the fast path declined the request and left it untouched.
    const bare = http.createServer((req, res) => {
      if (!fast(req, res)) res.writeHead(599).end();
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
    const status = (path: string, init: RequestInit = {}) => fetch(url + path, init).then((r) => r.status);
    const json = { 'Content-Type': 'application/json' };
    try {
      expect(await status('/v1/repositories/latest?groupId=com.fast&artifactId=one')).toBe(200);
      expect(await status('/v1/repositories/latest?groupId=com.fast&artifactId=gone')).toBe(404);
      expect(await status('/v1/repositories/search', { method: 'POST', headers: json, body: '{"groupId":"com.fast"}' })).toBe(200);
      expect(await status('/v1/repositories/search', { method: 'POST', headers: json, body: '{"groupId":' })).toBe(400);
      expect(await status('/v1/repositories/search', { method: 'POST' })).toBe(200);
      expect(await status('/v1/repositories/latest?groupId=com.fast&artifactId=one', { headers: { Authorization: `Bearer ${admin}` } })).toBe(599);
      expect(await status('/v1/repositories/latest?groupId=com.fast')).toBe(599);
      expect(await status('/v1/repositories/latest?groupId=a&groupId=b&artifactId=one')).toBe(599);
      expect(await status('/v1/repositories/search?size=0', { method: 'POST', headers: json, body: '{}' })).toBe(599);
      expect(await status('/v1/repositories/search', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'x' })).toBe(599);
      expect(await status('/v1/repositories/latest/?groupId=com.fast&artifactId=one')).toBe(599);
      expect(await status('/v1/repositories/search')).toBe(599);
      expect(await status('/health')).toBe(599);
    } finally {
      bare.closeAllConnections();
      await new Promise((resolve) => bare.close(resolve));
    }
  });

  it('logs a failure after an answer went out, never answers twice, and goes on', async () => {
    const log = createLogger('silent');
    const failures: unknown[] = [];
    // Logging the request, the last thing after the answer, fails.
    log.isLevelEnabled = () => {
      throw new Error('the log is broken');
    };
    log.error = ((details: unknown) => void failures.push(details)) as typeof log.error;
    const s = { db: server.db, config: server.config, log, now: () => new Date() } as Services;
    const fast = fastReads(s, undefined, { failed() {} });
    const bare = http.createServer((req, res) => {
      if (!fast(req, res)) res.writeHead(599).end();
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/v1/repositories/latest?groupId=com.fast&artifactId=one`);
      expect(res.status).toBe(200);
      expect((await res.json()).version).toBe('1.1.0');
      await expect.poll(() => failures.length).toBe(1);
      expect(failures[0]).toMatchObject({ err: { message: 'the log is broken' } });
      // The same while answering a failure (404): logged, and the server goes on.
      const missing = await fetch(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/v1/repositories/latest?groupId=com.fast&artifactId=gone`);
      expect(missing.status).toBe(404);
      await expect.poll(() => failures.length).toBe(2);
      expect(failures[1]).toMatchObject({ err: { message: 'the log is broken' } });
    } finally {
      bare.closeAllConnections();
      await new Promise((resolve) => bare.close(resolve));
    }
  });

  it('echoes a sensible X-Request-Id, replaces an odd one, and logs and counts the request under its route', async () => {
    const given = await server.request('GET', '/v1/repositories/latest?groupId=com.fast&artifactId=two', { headers: { 'X-Request-Id': 'pipeline-42.7' } });
    expect(given.status).toBe(200);
    expect(given.body.version).toBe('2.0.0-SNAPSHOT');
    expect(given.headers.get('x-request-id')).toBe('pipeline-42.7');
    const odd = await server.request('POST', '/v1/repositories/search', { body: {}, headers: { 'X-Request-Id': 'no spaces allowed' } });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    const line = server.logs.map((l) => JSON.parse(l)).find((l) => l.requestId === 'pipeline-42.7');
    expect(line).toMatchObject({ msg: 'request', method: 'GET', path: '/v1/repositories/latest', status: 200 });
    expect(line.durationMs).toBeGreaterThanOrEqual(0);

    const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
    const count = (route: string, status: number) =>
      Number(new RegExp(`http_requests_total\\{method="[A-Z]+",route="${route}",status="${status}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    expect(count('/v1/repositories/latest', 200)).toBeGreaterThanOrEqual(3);
    expect(count('/v1/repositories/latest', 404)).toBeGreaterThanOrEqual(2);
    expect(count('/v1/repositories/search', 200)).toBeGreaterThanOrEqual(4);
    expect(metrics).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/v1\/repositories\/latest",status="200"\} \d+/);
  });
});
