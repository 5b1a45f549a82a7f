// The command line's API client against the server's endpoint table: every request a method of the
// client sends is a declared endpoint (method and path), and the client retries exactly the
// endpoints the table says may be sent again (every GET, and the POSTs declared `idempotent`).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Api, createApi } from '../../cli/api/client.js';
import { memoryConfig } from '../../cli/config/store.js';
import { DEFAULT_SETTINGS } from '../../cli/deps.js';
import { ENDPOINTS } from '../../server/routes/index.js';

/** One call of each method that sends one request of its own, with made-up arguments. */
const CALLS: Record<Exclude<keyof Api, 'serverUrl' | 'credentials' | 'projectName'>, (api: Api) => Promise<unknown>> = {
  generateToken: (api) => api.generateToken({ username: 'u', password: 'p' }),
  me: (api) => api.me(),
  meWithToken: async (api) => api.meWithToken('t', await api.serverUrl()),
  listUsers: (api) => api.listUsers(),
  createUser: (api) => api.createUser({ username: 'u', password: 'p', projectName: 'p', role: 'ROLE_USER' }),
  changePassword: (api) => api.changePassword('u-1', 'p'),
  deleteUser: (api) => api.deleteUser('u-1'),
  publish: (api) => api.publish({ projectName: 'p', branch: 'main', artifact: { groupId: 'g', artifactId: 'a', version: '1' } }),
  search: (api) => api.search({ groupId: 'g' }, { page: 1 }),
  createToken: (api) => api.createToken({ name: 'n', scope: 'publish', expiresAt: null }),
  listTokens: (api) => api.listTokens({}),
  revokeToken: (api) => api.revokeToken('t-1'),
  revokeAllTokens: (api) => api.revokeAllTokens('u-1'),
  createWebhook: (api) => api.createWebhook({ url: 'https://hooks.example.com/' }),
  listWebhooks: (api) => api.listWebhooks(),
  deleteWebhook: (api) => api.deleteWebhook('w-1'),
  pingWebhook: (api) => api.pingWebhook('w-1'),
  webhookDeliveries: (api) => api.webhookDeliveries('w-1', {}),
  redeliver: (api) => api.redeliver('w-1', 'd-1'),
  rotateWebhookSecret: (api) => api.rotateWebhookSecret('w-1'),
  events: (api) => api.events({}),
  audit: (api) => api.audit({}),
  deleteVersion: (api) => api.deleteVersion('v-1', true),
  listTrash: (api) => api.listTrash({}),
  restoreVersion: (api) => api.restoreVersion('v-1'),
  createPolicy: (api) => api.createPolicy({ name: 'n' }),
  listPolicies: (api) => api.listPolicies(),
  changePolicy: (api) => api.changePolicy('r-1', { name: 'n' }),
  removePolicy: (api) => api.removePolicy('r-1'),
  runPolicy: (api) => api.runPolicy('r-1', true),
  createTrustedPublisher: (api) => api.createTrustedPublisher({ projectName: 'p', provider: 'github', claims: { repository: 'acme/app' } }),
  listTrustedPublishers: (api) => api.listTrustedPublishers({ projectName: 'p' }),
  getTrustedPublisher: (api) => api.getTrustedPublisher('t-1'),
  changeTrustedPublisher: (api) => api.changeTrustedPublisher('t-1', { branches: ['main'] }),
  removeTrustedPublisher: (api) => api.removeTrustedPublisher('t-1'),
  oidcAudience: (api) => api.oidcAudience(),
  exchangeIdToken: (api) => api.exchangeIdToken({ token: 'header.payload.signature' }),
  setEnvironments: (api) => api.setEnvironments('p', [{ name: 'dev' }]),
  environments: (api) => api.environments('p'),
  promote: (api) => api.promote({ uid: 'v-1', environment: 'dev' }),
  promotions: (api) => api.promotions({ projectName: 'p' }),
  veto: (api) => api.veto('v-1', 'broken'),
  liftVeto: (api) => api.liftVeto('v-1'),
};

/** Each request the server got, by method and path, and how many times. */
let received: { method: string; path: string }[] = [];
let server: http.Server;
let url: string;

beforeAll(async () => {
  // The first request answers 503 (what a proxy says while the server is away), the next ones 200:
  // a client that retries sends the request twice, one that does not sends it once.
  server = http.createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    received.push({ method: req.method!, path });
    req.resume();
    const first = received.filter((r) => r.method === req.method && r.path === path).length === 1;
    res.writeHead(first ? 503 : 200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** The declared endpoint of a request: its method, and its path with `{name}` matching one segment. */
function declared(method: string, path: string) {
  return ENDPOINTS.filter(
    (e) => e.method === method && new RegExp(`^${e.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
  );
}

it('names every method of the client that sends a request (a new one must be added here)', async () => {
  const api = createApi({ settings: { ...DEFAULT_SETTINGS, url }, env: { REPOADMIN_TOKEN: 't' }, now: () => new Date(), config: memoryConfig(), retryDelayMs: 1 });
  const methods = Object.keys(api).filter((name) => !['serverUrl', 'credentials', 'projectName'].includes(name));
  expect(methods.sort()).toEqual(Object.keys(CALLS).sort());
});

it.each(Object.entries(CALLS))('%s: a declared endpoint, retried exactly when the table says it may be sent again', async (_name, call) => {
  received = [];
  const api = createApi({ settings: { ...DEFAULT_SETTINGS, url }, env: { REPOADMIN_TOKEN: 't' }, now: () => new Date(), config: memoryConfig(), retryDelayMs: 1 });
  await call(api).catch(() => undefined);
  const distinct = [...new Map(received.map((r) => [`${r.method} ${r.path}`, r])).values()];
  expect(distinct).toHaveLength(1);
  const { method, path } = distinct[0]!;
  const endpoints = declared(method, path);
  expect(endpoints.map((e) => `${e.method} ${e.path}`), `${method} ${path} is not a declared endpoint`).toHaveLength(1);
  const retried = received.length > 1;
  expect(retried, `${method} ${path}: retried`).toBe(method === 'GET' || endpoints[0]!.idempotent === true);
});
