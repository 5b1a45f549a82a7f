// /metrics moves with the traffic, by route template; the logs carry no password or token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNMATCHED_ROUTE } from '../../server/http/observe.js';
import { sample } from '../helpers/metrics.js';
import { ADMIN_PASSWORD, type TestServer, startTestServer } from '../helpers/server.js';

describe('metrics and logs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  async function scrape(): Promise<string> {
    const res = await server.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text;
  }

  it('counts requests by method, route template and status, publishes, logins, and shows the pool and the process', async () => {
    const before = await scrape();
    const token = await server.adminToken();
    expect((await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'admin', password: 'wrong-password' } })).status).toBe(401);
    const record = { projectName: 'acme', branch: 'main', artifact: { groupId: 'com.acme', artifactId: 'metrics', version: '1.0.0' } };
    const first = await server.request('POST', '/v1/repositories', { body: record, token });
    expect(first.status).toBe(201);
    expect((await server.request('POST', '/v1/repositories', { body: record, token })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await server.request('GET', `/v1/repositories/${first.body.uid}`)).status).toBe(200);
    expect((await server.request('GET', '/v1/no-such-thing')).status).toBe(404);
    expect((await server.request('DELETE', '/health')).status).toBe(405);
    const after = await scrape();

    const moved = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(moved('http_requests_total', { method: 'POST', route: '/v1/repositories', status: '201' })).toBe(1);
    expect(moved('http_requests_total', { method: 'POST', route: '/v1/repositories', status: '200' })).toBe(1);
    expect(moved('http_requests_total', { method: 'GET', route: '/v1/repositories/:uid', status: '200' })).toBe(2);
    expect(moved('http_requests_total', { method: 'GET', route: UNMATCHED_ROUTE, status: '404' })).toBe(1);
    expect(moved('http_requests_total', { method: 'DELETE', route: UNMATCHED_ROUTE, status: '405' })).toBe(1);
    expect(moved('http_requests_total', { method: 'POST', route: '/v1/authentication/generate-token', status: '401' })).toBe(1);
    expect(moved('http_request_duration_seconds_count', { method: 'GET', route: '/v1/repositories/:uid', status: '200' })).toBe(2);
    expect(after).not.toContain(first.body.uid);

    expect(moved('repoadmin_publishes_total', { created: 'true' })).toBe(1);
    expect(moved('repoadmin_publishes_total', { created: 'false' })).toBe(1);
    expect(moved('repoadmin_logins_total', { result: 'success' })).toBe(1);
    expect(moved('repoadmin_logins_total', { result: 'failure' })).toBe(1);
    expect(before).toMatch(/^repoadmin_logins_total\{result="rate_limited"\} 0$/m);

    expect(sample(after, 'repoadmin_db_pool_max')).toBeGreaterThanOrEqual(1);
    expect(after).toMatch(/^repoadmin_db_pool_connections\{state="used"\} \d+$/m);
    expect(sample(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(after).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
  });

  it('writes one access line per request with request id, method, path, status and duration', async () => {
    const res = await server.request('GET', '/health', { headers: { 'X-Request-Id': 'trace-me-42' } });
    expect(res.status).toBe(200);
    const line = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.requestId === 'trace-me-42');
    expect(line).toMatchObject({ level: 30, msg: 'request', method: 'GET', path: '/health', status: 200 });
    expect(line!.durationMs).toEqual(expect.any(Number));
  });

  it('logs no password or token sent in the test, wherever it was sent', async () => {
    const token = await server.adminToken();
    const secret = 'Very-Secret-Pass-9';
    const created = await server.request('POST', '/v1/users', { token, body: { username: 'logcheck', password: secret, projectName: 'acme', role: 'ROLE_USER' } });
    expect(created.status).toBe(201);
    const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'logcheck', password: secret } });
    expect(login.status).toBe(200);
    const userToken = login.body.token as string;
    await server.request('GET', '/v1/users/me', { token: userToken });
    await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'logcheck', password: `${secret}-wrong` } });
    await server.request('PUT', `/v1/users/${created.body.userId}/password`, { token: userToken, body: { password: `${secret}-new` } });
    await server.request('POST', '/v1/repositories/search', { body: `{"password": "${secret}", broken` });
    await server.request('GET', `/v1/repositories/search?token=${userToken}&password=${secret}`);

    const logs = server.logs.join('\n');
    expect(logs).toContain('"path":"/v1/users/me"');
    for (const sent of [secret, `${secret}-wrong`, `${secret}-new`, ADMIN_PASSWORD, token, userToken]) expect(logs).not.toContain(sent);
  });

  it('serves no /metrics when REPO_MAN_METRICS=false', async () => {
    const quiet = await startTestServer({ config: { metrics: false } });
    try {
      const res = await quiet.request('GET', '/metrics');
      expect(res.status).toBe(404);
      expect(res.body._message.code).toBe('not_found');
    } finally {
      await quiet.close();
    }
  });

  it('keeps the counters of two apps in one process apart', async () => {
    const other = await startTestServer();
    try {
      const health = { method: 'GET', route: '/health', status: '200' };
      const mine = sample(await scrape(), 'http_requests_total', health);
      await other.request('GET', '/health');
      await other.request('GET', '/health');
      expect(sample((await other.request('GET', '/metrics')).text, 'http_requests_total', health)).toBe(2);
      expect(sample(await scrape(), 'http_requests_total', health)).toBe(mine);
    } finally {
      await other.close();
    }
  });
});
