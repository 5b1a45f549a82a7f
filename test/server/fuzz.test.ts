// Property-based fuzzing of every route: bodies (well-formed JSON of the right shape with odd values,
// any JSON, broken JSON), query strings and headers (content types, tokens, forwarded addresses,
// request ids). Whatever comes in, the answer is never a 5xx and never shows a stack trace, SQL or a
// secret. A fixed seed and a bounded number of runs keep it repeatable and short in CI; set
// REPOADMIN_FUZZ_RUNS (and REPOADMIN_FUZZ_SEED) to run longer by hand.
import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { ADMIN_PASSWORD, DEFAULT_ADMIN_ID, type TestServer, startTestServer } from '../helpers/server.js';

const SEED = Number(process.env.REPOADMIN_FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.REPOADMIN_FUZZ_RUNS ?? 500);
const JWT_SECRET = 'fuzz-jwt-secret-that-must-never-be-shown-0123456789';

/** Route templates; `{id}` is replaced by a fuzzed path segment. */
const ROUTES: [string, string][] = [
  ['POST', '/v1/authentication/generate-token'],
  ['POST', '/v1/users'],
  ['GET', '/v1/users'],
  ['GET', '/v1/users/me'],
  ['PUT', '/v1/users/{id}/password'],
  ['DELETE', '/v1/users/{id}'],
  ['POST', '/v1/repositories'],
  ['POST', '/v1/repositories/search'],
  ['GET', '/v1/repositories/latest'],
  ['GET', '/v1/repositories/{id}'],
  ['GET', '/health'],
  ['GET', '/health/ready'],
  ['GET', '/metrics'],
  ['GET', '/v1/openapi.json'],
  ['GET', '/public/{id}'],
  ['PATCH', '/v1/repositories'],
  ['GET', '/v1/{id}'],
];

/** Field names the routes read, so that fuzzed objects reach the validation and the services. */
const FIELDS = [
  'username', 'password', 'projectName', 'role', 'branch', 'artifact', 'groupId', 'artifactId', 'version',
  'repositoryUrl', 'creationDate', 'type', 'latestVersion', 'description', 'uid', 'dependencies',
];
const QUERY_NAMES = ['page', 'size', 'aPage', 'aSize', 'sortField', 'sortDirection', 'groupId', 'artifactId', 'branch', 'projectName'];

/** Strings that have broken servers: control characters, NUL, lone surrogates, SQL and LIKE text, huge numbers. */
const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.constantFrom(
    '', ' ', '\u0000', 'a\u0000b', '\ud800', '%', '_', '\\', '*', '\\*', "'; drop table versions; --", 'com.acme.*',
    'ROLE_ADMIN', 'ROLE_USER', 'true', 'false', '0', '-1', '1e309', '0x10', '9'.repeat(400), 'x'.repeat(70_000),
    '2019-03-02T20:30:35.420+0000', '2019-03-02T20:30:35', '+275760-09-13T00:00:00.000Z', 'NaN',
    'ssh://u:p@h/x.git', 'git@host:org/repo.git', 'https://h/x', 'version', 'creationDate', 'artifact.version', 'DESC', 'asc',
    '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd', '00000000-0000-0000-0000-000000000000',
  ),
);
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  oddString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(oddString, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('groupId', 'artifactId', 'version', 'x'), oddString, { maxKeys: 3 }),
);
const shapedBody = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 8 })), oddValue, { maxKeys: 8 });
const body = fc.oneof(
  shapedBody.map((o) => JSON.stringify(o)),
  fc.json(),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom('', '{', '{"a":', '[]', 'null', '"x"', '{"__proto__": {"admin": true}}', '{"constructor": {"prototype": {}}}'),
  fc.constant(undefined),
);
/** A body each route accepts, so that a mutation of one field gets past the others to the service. */
const VALID: Record<string, Record<string, unknown>> = {
  '/v1/authentication/generate-token': { username: 'admin', password: 'wrong-password' },
  '/v1/users': { username: 'fuzzed', password: 'fuzzed-password', projectName: 'fuzz', role: 'ROLE_USER' },
  '/v1/users/{id}/password': { password: 'another-password' },
  '/v1/repositories': {
    projectName: 'fuzz', branch: 'main', artifact: { groupId: 'fuzz', artifactId: 'lib', version: '1.0.0' },
    repositoryUrl: 'https://git.example.com/fuzz.git', creationDate: '2019-03-02T20:30:35.420+0000', type: 'LIBRARY', latestVersion: true, description: '**x**',
  },
  '/v1/repositories/search': { groupId: 'fuzz', artifactId: 'lib', latestVersion: true },
};
const mutated = (route: string) =>
  fc.dictionary(fc.constantFrom(...Object.keys(VALID[route] ?? { x: 1 })), oddValue, { minKeys: 1, maxKeys: 2 }).map((changes) => JSON.stringify({ ...VALID[route], ...changes }));

const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), fc.string({ maxLength: 6 })), oddString), { maxLength: 5 });
/** Header values Node can send: visible ASCII, spaces and tabs. */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 });

/** A path segment for any string; a lone surrogate (which encodeURIComponent refuses) goes as raw bytes. */
function pathSegment(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function send(base: string, r: Request): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${r.path}`, { method: r.method, headers: r.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', text }));
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

describe.each(dbKinds())('fuzzing every route on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let userId: string;
  let secrets: string[];
  beforeAll(async () => {
    server = await startTestServer({ kind, config: { trustProxy: 1, jwt: { secret: JWT_SECRET } } });
    admin = await server.adminToken();
    const created = await server.request('POST', '/v1/users', { token: admin, body: { username: 'fuzz-user', password: 'fuzz-user-password', projectName: 'fuzz', role: 'ROLE_USER' } });
    userId = created.body.userId;
    const hash = (await server.db('users').where({ username: 'admin' }).first()).password_hash as string;
    secrets = [JWT_SECRET, ADMIN_PASSWORD, 'fuzz-user-password', hash, hash.slice(7)];
  });
  afterAll(() => server?.close());

  it(`answers ${RUNS} fuzzed requests without a 5xx, a stack trace, SQL or a secret`, async () => {
    const request: fc.Arbitrary<Request> = fc
      .constantFrom(...ROUTES)
      .chain((route) => fc.record({
        route: fc.constant(route),
        id: fc.oneof(fc.uuid(), fc.constantFrom('fuzz-user', DEFAULT_ADMIN_ID.toUpperCase(), '..%2F..%2Fpackage.json', '%00', '%E0%A4%A'), oddString.map(pathSegment)),
        query,
        body: fc.oneof(body, mutated(route[1]), fc.constant(VALID[route[1]] && JSON.stringify(VALID[route[1]]))),
        contentType: fc.oneof(
          { weight: 4, arbitrary: fc.constant('application/json') },
          { weight: 1, arbitrary: fc.constant(undefined) },
          { weight: 2, arbitrary: fc.oneof(fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data; boundary=x'), headerText) },
        ),
        authorization: fc.oneof(
          { weight: 3, arbitrary: fc.constant('admin') },
          { weight: 1, arbitrary: fc.constant(undefined) },
          { weight: 2, arbitrary: fc.oneof(fc.constantFrom('bearer ', 'Basic YWRtaW46cGFzc3dvcmQ='), headerText.map((t) => `Bearer ${t}`), headerText) },
        ),
        forwardedFor: fc.option(fc.oneof(headerText, fc.constantFrom('203.0.113.9', '2001:db8::1, 10.0.0.1', 'x'.repeat(300), `${'9'.repeat(256)}, 10.0.0.1`)), { nil: undefined }),
        requestId: fc.option(headerText, { nil: undefined }),
      }))
      .map(({ route, id, query: pairs, body: text, contentType, authorization, forwardedFor, requestId }) => {
        const search = new URLSearchParams();
        for (const [k, v] of pairs) search.append(k, v);
        const headers: Record<string, string> = {};
        if (contentType !== undefined) headers['Content-Type'] = contentType;
        if (authorization !== undefined) headers.Authorization = authorization === 'admin' ? `Bearer ${admin}` : authorization;
        if (forwardedFor !== undefined) headers['X-Forwarded-For'] = forwardedFor;
        if (requestId !== undefined) headers['X-Request-Id'] = requestId;
        // Framed, or Node's client sends the body of a GET unframed and the server reads it as the next request.
        if (text !== undefined) headers['Content-Length'] = String(Buffer.byteLength(text));
        const path = route[1].replace('{id}', id === 'fuzz-user' ? userId : id) + (pairs.length ? `?${search}` : '');
        return { method: route[0], path, headers, body: text };
      });

    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const res = await send(server.url, r);
        expect(res.status, `${r.method} ${r.path}`).toBeLessThan(500);
        for (const secret of secrets) expect(res.text).not.toContain(secret);
        // Answers that succeed carry stored data (which may say "select") and the page; errors carry only our messages.
        if (res.status >= 400) {
          expect(res.text).not.toMatch(/\bat [\w.<>$]+ \(|node_modules|\.[jt]s:\d+:\d+/);
          expect(res.text).not.toMatch(/\b(select|insert into|update \S+ set|delete from)\b|violates|syntax error|knex|SQLSTATE/i);
          // Node's own parser answers an over-long or broken request head (431, 400) before the app, without a body.
          if (res.type.startsWith('application/json')) expect(JSON.parse(res.text)._status).toBe(false);
          else expect(res.text).toBe('');
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 60_000);

  it('answers a 70 KB request head with 431 every time, the whole request sent (never a reset)', async () => {
    const long = 'x'.repeat(70_000);
    for (let i = 0; i < 20; i++) {
      const res = await send(server.url, { method: 'GET', path: `/v1/search?groupId=${long}`, headers: {} });
      expect(res).toEqual({ status: 431, type: '', text: '' });
      const withBody = await send(server.url, { method: 'POST', path: '/v1/versions', headers: { 'X-Long': long, 'Content-Length': '2' }, body: '{}' });
      expect(withBody.status).toBe(431);
    }
  }, 60_000);
});
