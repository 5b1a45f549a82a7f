// Publishing answered before Koa (server/fast-publish.ts) answers exactly as the Koa route does. The
// same requests go to the server and to a second application on the same database and secret that
// sends everything through Koa; the answers are compared. Then which requests the fast path answers
// itself, which it hands to Koa once it has read the body, and which it leaves alone.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { fastPublish } from '../../server/fast-publish.js';
import { createLogger } from '../../server/log.js';
import { readBodyText } from '../../server/middleware/body.js';
import { issueToken, tokenSettings } from '../../server/auth/tokens.js';
import type { Services } from '../../server/services/context.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const SECRET = 'fast-publish-test-secret-with-enough-length';

const record = (projectName: string, version: string, extra: Record<string, unknown> = {}) => ({
  projectName,
  branch: 'main',
  artifact: { groupId: 'com.fast.publish', artifactId: 'lib', version },
  repositoryUrl: 'https://ci:hunter2@git.acme.test/alpha/core.git',
  latestVersion: true,
  description: 'Built by **CI**',
  ...extra,
});

interface Answer {
  status: number;
  body: unknown;
  type: string | null;
  length: string | null;
  retryAfter: string | null;
  requestId: string | null;
}

async function send(url: string, body: string | undefined, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${url}/v1/repositories`, { method: 'POST', headers: { 'X-Request-Id': 'fast-publish-1', ...headers }, body });
  const text = await response.text();
  return {
    status: response.status,
    body: JSON.parse(text),
    type: response.headers.get('content-type'),
    length: response.headers.get('content-length'),
    retryAfter: response.headers.get('retry-after'),
    requestId: response.headers.get('x-request-id'),
  };
}

/** Each record's uid differs between the two servers (each stores its own); the rest must not. */
function withoutUid(answer: Answer) {
  const body = answer.body as { uid?: unknown };
  return { ...answer, length: typeof body.uid === 'string' ? 'same for the same uid length' : answer.length, body: { ...body, uid: typeof body.uid } };
}

describe.each(dbKinds().filter((kind) => kind !== 'mysql'))('fast publish on %s', (kind) => {
  let server: TestServer;
  let koaOnly: http.Server;
  let koaUrl: string;
  let admin: string;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer({ kind, config: { jwt: { secret: SECRET } } });
    admin = await server.adminToken();
    const app = createApp({ db: server.db, config: { ...server.config, metrics: false }, log: createLogger('silent'), secret: SECRET, fastPaths: false });
    koaOnly = http.createServer(app.callback());
    await new Promise<void>((resolve) => koaOnly.listen(0, '127.0.0.1', resolve));
    koaUrl = `http://127.0.0.1:${(koaOnly.address() as AddressInfo).port}`;

    const user = await server.request('POST', '/v1/users', { token: admin, body: { username: 'fast-alpha', password: 'fast-alpha-secret', projectName: 'alpha', role: 'ROLE_USER' } });
    expect(user.status, user.text).toBe(201);
    const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'fast-alpha', password: 'fast-alpha-secret' } });
    tokens.user = login.body.token;
    for (const scope of ['publish', 'read'] as const) {
      const made = await server.request('POST', '/v1/tokens', { token: admin, body: { name: `fast-${scope}`, scope, userId: user.body.userId } });
      expect(made.status, made.text).toBe(201);
      tokens[scope] = made.body.token;
    }
    // A user whose session tokens were all revoked (a new token version): signed, refused by the database.
    const gone = await server.request('POST', '/v1/users', { token: admin, body: { username: 'fast-gone', password: 'fast-gone-secret', projectName: 'alpha', role: 'ROLE_USER' } });
    tokens.revoked = (await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'fast-gone', password: 'fast-gone-secret' } })).body.token;
    await server.db('users').where({ id: gone.body.userId }).increment('token_version', 1);
    const settings = tokenSettings(SECRET, server.config.jwt.issuer, 60);
    tokens.expired = issueToken(settings, { userId: user.body.userId, username: 'fast-alpha', role: 'ROLE_USER', tokenVersion: 0 }, new Date(Date.now() - 3_600_000)).token;
  });
  afterAll(async () => {
    koaOnly?.closeAllConnections();
    await new Promise((resolve) => koaOnly?.close(resolve));
    await server?.close();
  });

  const json = (token?: string) => ({ 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) });
  let version = 0;
  /** A record not published before on either server, as a string. */
  const fresh = (projectName = 'alpha', extra: Record<string, unknown> = {}) => JSON.stringify(record(projectName, `1.0.${++version}`, extra));

  const cases: [string, () => [string | undefined, Record<string, string>]][] = [
    ['an administrator publishing', () => [fresh('beta'), json(admin)]],
    ['a user publishing to the project', () => [fresh(), json(tokens.user)]],
    ['a user publishing to another project', () => [fresh('beta'), json(tokens.user)]],
    ['a project token of the scope publish', () => [fresh(), json(tokens.publish)]],
    ['a project token of the scope read', () => [fresh(), json(tokens.read)]],
    ['a revoked session token', () => [fresh(), json(tokens.revoked)]],
    ['a revoked session token and an invalid record', () => [JSON.stringify({ projectName: 'alpha' }), json(tokens.revoked)]],
    ['an invalid record', () => [JSON.stringify({ projectName: 'alpha', branch: 'main', artifact: { groupId: 'g' } }), json(admin)]],
    ['a field of the wrong type', () => [fresh('alpha', { latestVersion: 'yes' }), json(admin)]],
    ['malformed JSON', () => ['{"projectName": ', json(admin)]],
    ['a JSON array', () => ['[1, 2]', json(admin)]],
    ['no body', () => [undefined, json(admin)]],
    ['a text body', () => [fresh(), { 'Content-Type': 'text/plain', Authorization: `Bearer ${admin}` }]],
    ['no token', () => [fresh(), json()]],
    ['an expired session token', () => [fresh(), json(tokens.expired)]],
    ['an expired session token and an invalid record', () => ['{}', json(tokens.expired)]],
    ['a token that is not signed here', () => [fresh(), json(`${admin.slice(0, -4)}AAAA`)]],
    ['a malformed Authorization header', () => [fresh(), { 'Content-Type': 'application/json', Authorization: admin }]],
    ['a charset in the content type', () => [fresh(), { ...json(admin), 'Content-Type': 'application/json; charset=utf-8' }]],
  ];

  it.each(cases)('%s: the same answer as through Koa', async (_name, make) => {
    const [body, headers] = make();
    const fast = await send(server.url, body, headers);
    // The Koa-only server gets the same record under another version, so that both create.
    const other = body?.replace(/"version":"1\.0\.(\d+)"/, (_m, n) => `"version":"2.0.${n}"`);
    const koa = await send(koaUrl, other, headers);
    expect(withoutUid(fast)).toEqual(withoutUid(koa));
  });

  it('answers a replaced record 200 with the same uid, as Koa does', async () => {
    const body = fresh();
    const first = await send(server.url, body, json(admin));
    const again = await send(server.url, body, json(admin));
    const koaAgain = await send(koaUrl, body, json(admin));
    expect([first.status, again.status, koaAgain.status]).toEqual([201, 200, 200]);
    const uid = (first.body as { uid: string }).uid;
    expect(again.body).toEqual({ _status: true, uid, created: false });
    expect(koaAgain.body).toEqual({ _status: true, uid, created: false });
  });

  it('answers a body over the limit 413 whether its length is declared or not, as Koa does', async () => {
    const big = JSON.stringify(record('alpha', '9.9.9', { description: 'x'.repeat(1024 * 1024) }));
    const declared = await Promise.all([server.url, koaUrl].map((url) => send(url, big, json(admin))));
    expect(declared[0]!.status).toBe(413);
    expect(withoutUid(declared[0]!)).toEqual(withoutUid(declared[1]!));
    // Streamed in chunks without Content-Length: only the fast path reads it before knowing its size.
    const streamed = (url: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(`${url}/v1/repositories`, { method: 'POST', headers: json(admin) }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        });
        req.on('error', reject);
        for (let i = 0; i < 20; i++) req.write('x'.repeat(64 * 1024));
        req.end();
      });
    const [fast, koa] = [await streamed(server.url), await streamed(koaUrl)];
    expect(fast.status).toBe(413);
    expect(JSON.parse(fast.text)).toEqual(JSON.parse(koa.text));
  });

  it('answers the ordinary publish itself, hands what it cannot to Koa with the body read, and leaves the rest', async () => {
    const s = { db: server.db, config: server.config, log: createLogger('silent'), now: () => new Date(), tokens: tokenSettings(SECRET, server.config.jwt.issuer, 3600) } as Services;
    // 598: handed to Koa after the body was read (and Koa got the whole body); 599: left untouched.
    let handed = '';
    const fast = fastPublish(s, undefined, { failed() {} }, async (req, res) => {
      handed = await readBodyText(req);
      res.writeHead(598).end();
    });
    const bare = http.createServer((req, res) => {
      if (!fast(req, res)) res.writeHead(599).end();
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
    const status = async (body: string | undefined, headers: Record<string, string>, path = '/v1/repositories') =>
      (await fetch(url + path, { method: 'POST', headers, body })).status;
    try {
      expect(await status(fresh(), json(admin))).toBe(201);
      expect(await status(fresh(), json(tokens.user))).toBe(201);
      expect(await status(fresh(), json(tokens.publish))).toBe(201);
      const refused = fresh('beta');
      expect(await status(refused, json(tokens.user))).toBe(598);
      expect(handed).toBe(refused);
      expect(await status(fresh(), json(tokens.read))).toBe(598);
      expect(await status(fresh(), json(tokens.revoked))).toBe(598);
      expect(await status('{"projectName": ', json(admin))).toBe(598);
      expect(handed).toBe('{"projectName": ');
      expect(await status(fresh(), json())).toBe(599);
      expect(await status(fresh(), json('not-a-token'))).toBe(599);
      expect(await status(fresh(), json(tokens.expired))).toBe(599);
      expect(await status(fresh(), { 'Content-Type': 'text/plain', Authorization: `Bearer ${admin}` })).toBe(599);
      expect(await status(undefined, json(admin))).toBe(599);
      expect(await status(fresh(), json(admin), '/v1/repositories?x=1')).toBe(599);
      expect(await status(fresh(), json(admin), '/v1/repositories/search')).toBe(599);
    } finally {
      bare.closeAllConnections();
      await new Promise((resolve) => bare.close(resolve));
    }
  });

  it('logs and counts a publish it answered under its route, and counts it as published', async () => {
    const counted = async () => {
      const text = await fetch(`${server.url}/metrics`).then((r) => r.text());
      const count = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
      return {
        requests: count(/http_requests_total\{method="POST",route="\/v1\/repositories",status="201"\} (\d+)/),
        created: count(/repoadmin_publishes_total\{created="true"\} (\d+)/),
        replaced: count(/repoadmin_publishes_total\{created="false"\} (\d+)/),
      };
    };
    const before = await counted();
    const body = JSON.parse(fresh());
    const res = await server.request('POST', '/v1/repositories', { token: admin, body, headers: { 'X-Request-Id': 'fast-publish-logged' } });
    expect(res.status).toBe(201);
    expect((await server.request('POST', '/v1/repositories', { token: admin, body })).status).toBe(200);
    const after = await counted();
    expect([after.requests - before.requests, after.created - before.created, after.replaced - before.replaced]).toEqual([1, 1, 1]);
    expect(res.headers.get('x-request-id')).toBe('fast-publish-logged');
    const line = server.logs.map((l) => JSON.parse(l)).find((l) => l.requestId === 'fast-publish-logged');
    expect(line).toMatchObject({ msg: 'request', method: 'POST', path: '/v1/repositories', status: 201 });
  });
});

describe.each(dbKinds().filter((kind) => kind === 'mysql'))('fast publish on %s', (kind) => {
  it('is not taken: the database cannot check a credential in the publish statement', async () => {
    const server = await startTestServer({ kind });
    try {
      const s = { db: server.db, config: server.config, log: createLogger('silent'), now: () => new Date() } as Services;
      const fast = fastPublish(s, undefined, { failed() {} }, async () => {});
      expect(fast({ method: 'POST', url: '/v1/repositories', headers: {} } as http.IncomingMessage, {} as http.ServerResponse)).toBe(false);
    } finally {
      await server.close();
    }
  });
});
