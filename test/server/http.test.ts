// The HTTP surface: the one error shape everywhere, body limits, request ids, docs, health.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../common/schemas/errors.js';
import { UNKNOWN_METHOD } from '../../server/http-server.js';
import { UNMATCHED_ROUTE } from '../../server/http/observe.js';
import { sample } from '../helpers/metrics.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('http', () => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  const expectError = (res: { status: number; body: unknown; headers: Headers }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(ErrorBody.parse(res.body)._message.code).toBe(code);
  };

  it('answers unknown routes with 404 and wrong methods with 405, in the error shape', async () => {
    expectError(await server.request('GET', '/v1/nothing'), 404, 'not_found');
    expectError(await server.request('GET', '/v2/repositories'), 404, 'not_found');
    expectError(await server.request('GET', '/public/missing.js'), 404, 'not_found');
    const wrong = await server.request('DELETE', '/v1/repositories/search');
    expectError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toContain('POST');
    expectError(await server.request('PATCH', '/v1/users'), 405, 'method_not_allowed');
  });

  it('requires JSON bodies (415), well-formed (400), objects (400), at most 1 MiB (413)', async () => {
    const url = `${server.url}/v1/repositories`;
    const auth = { Authorization: `Bearer ${admin}` };
    const post = (body: string, type?: string) => fetch(url, { method: 'POST', body, headers: { ...auth, ...(type ? { 'Content-Type': type } : {}) } });
    const check = async (res: Response, status: number, code: string) => expectError({ status: res.status, headers: res.headers, body: await res.json() }, status, code);
    await check(await post('{"a":1}', 'text/plain'), 415, 'unsupported_media_type');
    await check(await post('projectName=x', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    await check(await post('{"projectName": ', 'application/json'), 400, 'validation');
    await check(await post('[1,2]', 'application/json; charset=utf-8'), 400, 'validation');
    await check(await post(JSON.stringify({ description: 'x'.repeat(1024 * 1024 + 10) }), 'application/json'), 413, 'payload_too_large');
    const ok = await post(JSON.stringify({ projectName: 'p', branch: 'b', artifact: { groupId: 'g', artifactId: 'a', version: '1' } }), 'application/json; charset=UTF-8');
    expect(ok.status).toBe(201);
  });

  it('answers the user routes with valid: false and userId on every error', async () => {
    const noToken = await server.request('POST', '/v1/users', { body: {} });
    expect(noToken.status).toBe(401);
    expect(noToken.body).toMatchObject({ _status: false, valid: false, userId: null });
    const badJson = await server.request('PUT', '/v1/users/00000000-0000-4000-8000-000000000000/password', { token: admin, body: '{oops' });
    expect(badJson.status).toBe(400);
    expect(badJson.body).toMatchObject({ valid: false, userId: '00000000-0000-4000-8000-000000000000' });
  });

  it('echoes a client X-Request-Id and makes one otherwise, on errors too', async () => {
    const echoed = await server.request('GET', '/health', { headers: { 'X-Request-Id': 'build-42.step:7' } });
    expect(echoed.headers.get('x-request-id')).toBe('build-42.step:7');
    const made = await server.request('GET', '/v1/nothing');
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await server.request('GET', '/health', { headers: { 'X-Request-Id': 'a b <script>' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers what Node's parser refuses with a request id, logged and counted like any answer", async () => {
    /** Sends raw bytes and reads until the server closes: the status and the headers of its answer. */
    const sendRaw = (bytes: string) =>
      new Promise<{ status: number; headers: Map<string, string> }>((resolve, reject) => {
        const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('error', reject);
        socket.on('end', () => {
          const [statusLine = '', ...lines] = text.split('\r\n\r\n', 1)[0]!.split('\r\n');
          const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
          resolve({ status: Number(statusLine.split(' ')[1]), headers });
        });
        socket.end(bytes);
      });
    const labels = (status: number) => ({ method: UNKNOWN_METHOD, route: UNMATCHED_ROUTE, status: String(status) });
    const before = (await server.request('GET', '/metrics')).text;
    const broken = await sendRaw('GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n');
    const tooLong = await sendRaw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Long: ${'x'.repeat(70_000)}\r\n\r\n`);
    expect(broken.status).toBe(400);
    expect(tooLong.status).toBe(431);
    for (const answer of [broken, tooLong]) {
      expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      const line = server.logs.find((l) => l.includes(`"requestId":"${answer.headers.get('x-request-id')}"`));
      expect(JSON.parse(line!)).toMatchObject({ msg: 'request', method: UNKNOWN_METHOD, status: answer.status });
    }
    const after = (await server.request('GET', '/metrics')).text;
    for (const status of [400, 431]) {
      expect(sample(after, 'http_requests_total', labels(status)) - sample(before, 'http_requests_total', labels(status))).toBe(1);
      expect(sample(after, 'http_request_duration_seconds_count', labels(status)) - sample(before, 'http_request_duration_seconds_count', labels(status))).toBe(1);
    }
  });

  it('serves health, readiness, the OpenAPI description and redirects / to the page', async () => {
    expect((await server.request('GET', '/health')).body).toEqual({ status: 'up' });
    expect((await server.request('GET', '/health/ready')).body).toEqual({ status: 'up', database: 'up' });
    const json = await server.request('GET', '/v1/openapi.json');
    expect(json.body.openapi).toBe('3.1.0');
    expect(Object.keys(json.body.paths)).toEqual(expect.arrayContaining(['/v1/authentication/generate-token', '/v1/users', '/v1/users/{userId}/password', '/v1/repositories', '/v1/repositories/search', '/v1/repositories/latest']));
    expect(json.body.components.schemas.VersionRecord.required).toEqual(['projectName', 'branch', 'artifact']);
    const yaml = await server.request('GET', '/swagger.yaml');
    expect(yaml.headers.get('content-type')).toMatch(/yaml/);
    expect(yaml.text).toContain('openapi: 3.1.0');
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/public/index.html');
    const page = await fetch(`${server.url}/public/index.html`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('refuses path tricks under /public', async () => {
    const res = await fetch(`${server.url}/public/..%2f..%2fpackage.json`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(await res.text()).not.toContain('"devDependencies"');
  });
});
