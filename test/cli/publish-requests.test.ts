// How many HTTP requests `repoadmin publish` sends (docs/cli.md, "Credentials and configuration"),
// counted by a proxy between the built CLI and the real server: one after `login`, a login plus the
// publish with a user name and password in the environment, and with a project token in the
// environment the question "whose project?" plus the publish unless --project answers it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { assertBuilt, freshHome, run } from './run.js';

interface CountingProxy {
  url: string;
  /** `METHOD /path?query` of each request since the last take(). */
  take(): string[];
  close(): Promise<void>;
}

/** Passes every request on to `target` as it came, and notes it. */
async function countingProxy(target: string): Promise<CountingProxy> {
  let seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const upstream = http.request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take: () => {
      const taken = seen;
      seen = [];
      return taken;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const PASSWORD = 'shop-ci-secret';
const PUBLISH = 'POST /v1/repositories';
const ME = 'GET /v1/users/me';
const LOGIN = 'POST /v1/authentication/generate-token';

let server: TestServer;
let proxy: CountingProxy;
let version = 0;
let tokens = 0;
/** New coordinates each time, on the branch main. */
const publishArgs = () => ['publish', '--group', 'count', '--artifact', 'app', '--version', `1.0.${++version}`, '--branch', 'main'];

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer();
  const created = await server.request('POST', '/v1/users', {
    token: await server.adminToken(),
    body: { username: 'shop-ci', password: PASSWORD, projectName: 'shop', role: 'ROLE_USER' },
  });
  expect(created.status).toBe(201);
  proxy = await countingProxy(server.url);
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
});

async function projectToken(): Promise<string> {
  const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'shop-ci', password: PASSWORD } });
  const made = await server.request('POST', '/v1/tokens', { token: login.body.token, body: { name: `ci-${++tokens}`, scope: 'publish' } });
  expect(made.status).toBe(201);
  return made.body.token as string;
}

describe('the requests of one publish', () => {
  it('after login: exactly one, the publish', async () => {
    const home = await freshHome();
    const login = await run(['login', '--url', proxy.url, '--username', 'shop-ci', '--password-stdin'], { home, stdin: PASSWORD });
    expect(login.code).toBe(0);
    expect(proxy.take()).toEqual([LOGIN]);

    const published = await run(publishArgs(), { home });
    expect(published).toMatchObject({ code: 0, stderr: `Created count:app:1.0.${version} (project shop, branch main).\n` });
    expect(proxy.take()).toEqual([PUBLISH]);
  });

  it('after a login stored before the project was kept: asks once, then one request a publish', async () => {
    const home = await freshHome();
    const login = await run(['login', '--url', proxy.url, '--username', 'shop-ci', '--password-stdin'], { home, stdin: PASSWORD });
    expect(login.code).toBe(0);
    // The file as an older repoadmin wrote it: no project, no role.
    const file = join(home, '.config', 'repoadmin', 'config.json');
    const config = JSON.parse(await readFile(file, 'utf8'));
    const { projectName, role, ...older } = config.servers[proxy.url];
    expect({ projectName, role }).toEqual({ projectName: 'shop', role: 'ROLE_USER' });
    await writeFile(file, JSON.stringify({ ...config, servers: { [proxy.url]: older } }));
    proxy.take();

    expect((await run(publishArgs(), { home })).code).toBe(0);
    expect(proxy.take()).toEqual([ME, PUBLISH]);
    expect(JSON.parse(await readFile(file, 'utf8')).servers[proxy.url]).toEqual({ ...older, projectName: 'shop', role: 'ROLE_USER' });
    expect((await run(publishArgs(), { home })).code).toBe(0);
    expect(proxy.take()).toEqual([PUBLISH]);
  });

  it('with REPOADMIN_USERNAME and REPOADMIN_PASSWORD: the login, then the publish', async () => {
    const home = await freshHome();
    const env = { REPOADMIN_URL: proxy.url, REPOADMIN_USERNAME: 'shop-ci', REPOADMIN_PASSWORD: PASSWORD };
    const published = await run(publishArgs(), { home, env });
    expect(published).toMatchObject({ code: 0, stderr: `Created count:app:1.0.${version} (project shop, branch main).\n` });
    expect(proxy.take()).toEqual([LOGIN, PUBLISH]);
  });

  it('with a project token in REPOADMIN_TOKEN: whose project, then the publish; with --project the publish alone', async () => {
    const home = await freshHome();
    const env = { REPOADMIN_URL: proxy.url, REPOADMIN_TOKEN: await projectToken() };
    expect((await run(publishArgs(), { home, env })).code).toBe(0);
    expect(proxy.take()).toEqual([ME, PUBLISH]);
    expect((await run([...publishArgs(), '--project', 'shop'], { home, env })).code).toBe(0);
    expect(proxy.take()).toEqual([PUBLISH]);
  });

  it('with a project token stored by login --with-token: one request', async () => {
    const home = await freshHome();
    const login = await run(['login', '--url', proxy.url, '--with-token'], { home, stdin: await projectToken() });
    expect(login.code).toBe(0);
    expect(proxy.take()).toEqual([ME]);
    expect((await run(publishArgs(), { home })).code).toBe(0);
    expect(proxy.take()).toEqual([PUBLISH]);
  });

  it('a project token the server does not know: refused at the first request, saying what to check, nothing published', async () => {
    const home = await freshHome();
    const env = { REPOADMIN_URL: proxy.url, REPOADMIN_TOKEN: `rpa_${'A'.repeat(43)}` };
    const published = await run(publishArgs(), { home, env });
    expect(published.code).toBe(4);
    expect(published.stderr).toContain('check REPOADMIN_TOKEN');
    expect(proxy.take()).toEqual([ME]);
  });
});
