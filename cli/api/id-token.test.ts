// Trusted publishing on the client's side: which runs exchange an ID token, how GitHub Actions' token
// is asked for, what is sent to the registry, and what a refusal becomes. Against a small real HTTP
// server that plays both the registry and GitHub's token service.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT_CODE } from '../../common/errors.js';
import { memoryConfig } from '../config/store.js';
import { DEFAULT_SETTINGS } from '../deps.js';
import { createApi } from './client.js';

interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  auth?: string;
  body: string;
}
type Answer = { status: number; body?: unknown };
const servers: http.Server[] = [];

const ID_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmFjbWUvYXBwIn0.c2lnbmF0dXJl';
const REQUEST_TOKEN = 'actions-request-token';
const EXCHANGED = {
  token: `rpa_${'E'.repeat(43)}`,
  tokenId: '0b8e6a8e-3f49-4c7e-9a57-3d1c7d5a2f10',
  expiresAt: '2026-11-21T10:15:00.000Z',
  projectName: 'shop',
  branch: 'main',
  scopes: ['publish'],
  publisherId: '5d7c4a0e-8f3b-4b3e-9a61-0c2d1e4f5a6b',
};
const errorBody = (code: string, message: string) => ({ _status: false, _message: { category: 'ERROR', code, message } });
const RECORD = { projectName: 'shop', branch: 'main', artifact: { groupId: 'g', artifactId: 'a', version: '1' } };

/** The registry and GitHub's token service (`/_apis/token`) on one port; `overrides` answers by path. */
async function serve(overrides: Record<string, Answer> = {}): Promise<{ url: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      requests.push({ method: req.method!, path: url.pathname, query: url.searchParams, auth: req.headers.authorization, body });
      const fallback: Record<string, Answer> = {
        '/v1/authentication/oidc/audience': { status: 200, body: { audience: 'registry.example' } },
        '/_apis/token':
          req.headers.authorization === `Bearer ${REQUEST_TOKEN}` ? { status: 200, body: { count: 1, value: ID_TOKEN } } : { status: 401, body: {} },
        '/v1/authentication/oidc': { status: 200, body: EXCHANGED },
        '/v1/repositories': { status: 201, body: { uid: '7f1c0a52-1e0e-4f8e-9d0b-2f1a3c4d5e6f', created: true } },
      };
      const answer = overrides[url.pathname] ?? fallback[url.pathname] ?? { status: 404, body: errorBody('not_found', 'no such path') };
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body ?? {}));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

function client(url: string, env: NodeJS.ProcessEnv, options: { config?: ReturnType<typeof memoryConfig>; log?: string[] } = {}) {
  return createApi({
    settings: { ...DEFAULT_SETTINGS, url },
    env,
    now: () => new Date('2026-11-21T10:00:00.000Z'),
    config: options.config ?? memoryConfig(),
    log: options.log ? (line) => options.log!.push(line) : undefined,
    retryDelayMs: 1,
  });
}

const actionsEnv = (url: string) => ({
  // GitHub's own URL already carries a query: the audience is added to it.
  ACTIONS_ID_TOKEN_REQUEST_URL: `${url}/_apis/token?api-version=2.0`,
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: REQUEST_TOKEN,
});

describe('the ID token exchange', () => {
  it('in GitHub Actions: asks the audience, gets the ID token for it with the request token, exchanges it, and publishes with the result', async () => {
    const server = await serve();
    const log: string[] = [];
    const config = memoryConfig();
    const api = client(server.url, actionsEnv(server.url), { config, log });
    await api.publish(RECORD);

    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v1/authentication/oidc/audience',
      'GET /_apis/token',
      'POST /v1/authentication/oidc',
      'POST /v1/repositories',
    ]);
    const [audience, tokenRequest, exchange, publish] = server.requests;
    expect(audience!.auth).toBeUndefined();
    expect(tokenRequest!.auth).toBe(`Bearer ${REQUEST_TOKEN}`);
    expect(Object.fromEntries(tokenRequest!.query)).toEqual({ 'api-version': '2.0', audience: 'registry.example' });
    expect(exchange!.auth).toBeUndefined();
    // The project of the first call that needs a token goes with the exchange.
    expect(JSON.parse(exchange!.body)).toEqual({ token: ID_TOKEN, projectName: 'shop' });
    expect(publish!.auth).toBe(`Bearer ${EXCHANGED.token}`);

    // --verbose says which publisher matched, and never shows a token whole.
    expect(log.join('\n')).toContain(`trusted publisher ${EXCHANGED.publisherId} matched: a token for project shop, branch main`);
    for (const secret of [ID_TOKEN, EXCHANGED.token, REQUEST_TOKEN]) expect(log.join('\n')).not.toContain(secret);
    // Kept in memory only.
    expect(await config.current()).toBeUndefined();
    expect(await api.credentials()).toMatchObject({ source: 'oidc', projectName: 'shop', branch: 'main', publisherId: EXCHANGED.publisherId });
  });

  it('with REPOADMIN_ID_TOKEN: exchanges it as it is, without asking the audience; once per run', async () => {
    const server = await serve();
    const api = client(server.url, { REPOADMIN_ID_TOKEN: `${ID_TOKEN}\n`, ...actionsEnv(server.url) });
    await api.publish(RECORD);
    await api.publish(RECORD);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/authentication/oidc', 'POST /v1/repositories', 'POST /v1/repositories']);
    expect(JSON.parse(server.requests[0]!.body).token).toBe(ID_TOKEN);
  });

  it('a token that belongs to no user: projectName comes from the exchange, and /v1/users/me is never asked', async () => {
    const server = await serve();
    const api = client(server.url, { REPOADMIN_ID_TOKEN: ID_TOKEN });
    expect(await api.projectName()).toBe('shop');
    await expect(api.me()).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining('belongs to no user') });
    expect(server.requests.map((r) => r.path)).not.toContain('/v1/users/me');
    // Without a project at hand, the server is left to find the one project whose publishers match.
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ token: ID_TOKEN });
  });

  it('is not used when a token, a password or a valid stored login is given; an expired stored login gives way to it', async () => {
    const server = await serve({ '/v1/authentication/generate-token': { status: 200, body: { token: 'session', userId: 'u', expiresAt: '2026-11-21T11:00:00.000Z', username: 'ci', role: 'ROLE_USER', projectName: 'shop', mustChangePassword: false } } });
    const env = { REPOADMIN_ID_TOKEN: ID_TOKEN };
    expect((await client(server.url, { ...env, REPOADMIN_TOKEN: 'given' }).credentials()).source).toBe('env');
    expect((await client(server.url, { ...env, REPOADMIN_USERNAME: 'ci', REPOADMIN_PASSWORD: 'pw' }).credentials()).source).toBe('login');
    const stored = (expiresAt: string) => {
      const config = memoryConfig();
      void config.save({ url: server.url, username: 'ci', userId: 'u', token: 'stored', expiresAt });
      return config;
    };
    expect((await client(server.url, env, { config: stored('2026-11-21T12:00:00.000Z') }).credentials()).source).toBe('config');
    expect(server.requests.map((r) => r.path)).not.toContain('/v1/authentication/oidc');
    expect((await client(server.url, env, { config: stored('2026-11-21T09:00:00.000Z') }).credentials()).source).toBe('oidc');
  });

  it("a refused exchange is a credentials error (exit 4) with the server's message, which names the claim", async () => {
    const message = 'no trusted publisher of shop matches: claim repository: expected "acme/shop", got "mallory/shop"';
    const server = await serve({ '/v1/authentication/oidc': { status: 403, body: errorBody('forbidden', message) } });
    const failure = await client(server.url, actionsEnv(server.url)).publish(RECORD).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'forbidden', message: `the ID token of GitHub Actions was refused: ${message}` });
    expect(EXIT_CODE[(failure as { code: 'forbidden' }).code]).toBe(4);
    expect(server.requests.map((r) => r.path)).not.toContain('/v1/repositories');

    const unverified = await serve({ '/v1/authentication/oidc': { status: 401, body: errorBody('unauthorized', 'the ID token expired at 2026-11-21T09:00:00Z') } });
    await expect(client(unverified.url, { REPOADMIN_ID_TOKEN: ID_TOKEN }).credentials()).rejects.toMatchObject({
      code: 'unauthorized',
      message: 'the ID token of REPOADMIN_ID_TOKEN was refused: the ID token expired at 2026-11-21T09:00:00Z',
    });
    // Several projects' publishers matched: still a credentials problem, and what to do.
    const several = await serve({ '/v1/authentication/oidc': { status: 409, body: errorBody('conflict', 'publishers of several projects match: a, b') } });
    await expect(client(several.url, { REPOADMIN_ID_TOKEN: ID_TOKEN }).credentials()).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining('--project') });
  });

  it('is sent once: an ID token is accepted once, so a 503 is not retried with it', async () => {
    const server = await serve({ '/v1/authentication/oidc': { status: 503, body: errorBody('unavailable', 'the issuer cannot be reached') } });
    await expect(client(server.url, { REPOADMIN_ID_TOKEN: ID_TOKEN }).credentials()).rejects.toMatchObject({ code: 'unavailable' });
    expect(server.requests.filter((r) => r.path === '/v1/authentication/oidc')).toHaveLength(1);
  });

  it("GitHub's refusal to issue an ID token says which permission the job lacks", async () => {
    const server = await serve({ '/_apis/token': { status: 403, body: { message: 'no permission' } } });
    await expect(client(server.url, actionsEnv(server.url)).credentials()).rejects.toMatchObject({
      code: 'unauthorized',
      message: expect.stringContaining('permissions: id-token: write'),
    });
    const empty = await serve({ '/_apis/token': { status: 200, body: { count: 0 } } });
    await expect(client(empty.url, actionsEnv(empty.url)).credentials()).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringContaining('no "value"') });
    expect(empty.requests.map((r) => r.path)).not.toContain('/v1/authentication/oidc');
  });

  it('without an ID token, the message names every way to give credentials', async () => {
    const server = await serve();
    await expect(client(server.url, { ACTIONS_ID_TOKEN_REQUEST_URL: `${server.url}/_apis/token` }).credentials()).rejects.toMatchObject({
      code: 'unauthorized',
      message: expect.stringContaining('REPOADMIN_ID_TOKEN'),
    });
    expect(server.requests).toEqual([]);
  });
});
