// How a person leaves a prompt, in a real terminal (tmux): declining a confirmation is exit 1
// ("not confirmed"), Ctrl-C is exit 130, as docs/cli.md, "Exit codes" says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertBuilt, freshHome } from './run.js';
import { skipping } from '../helpers/skip.js';
import { inTerminal, tmuxMissing, tmuxPath, type Terminal } from './terminal.js';

let server: TestServer;
let env: Record<string, string>;
const open: Terminal[] = [];

const missing = skipping('the prompt tests', tmuxMissing());

beforeAll(async () => {
  if (missing) return;
  assertBuilt();
  await tmuxPath();
  server = await startTestServer();
  const admin = await server.adminToken();
  const created = await server.request('POST', '/v1/users', {
    token: admin,
    body: { username: 'shop-ci', password: 'shop-ci-secret', projectName: 'shop', role: 'ROLE_USER' },
  });
  expect(created.status).toBe(201);
  env = { HOME: await freshHome(), REPOADMIN_URL: server.url, REPOADMIN_TOKEN: admin };
});

afterAll(async () => {
  await Promise.all(open.map((t) => t.close()));
  await server?.close();
});

async function terminal(args: string[], extra: Record<string, string> = {}): Promise<Terminal> {
  const t = await inTerminal(args, { ...env, ...extra });
  open.push(t);
  return t;
}

describe.skipIf(missing)('leaving a prompt', () => {
  it('answering no to a confirmation is exit 1, "not confirmed", and nothing is deleted', async () => {
    const t = await terminal(['user', 'delete', 'shop-ci']);
    await t.waitFor(/Delete user shop-ci \(ROLE_USER, project shop\)\? This cannot be undone\./);
    await t.enter('n');
    expect(await t.exitCode()).toBe(1);
    expect(await t.screen()).toContain('error: not confirmed: nothing was deleted');
    expect(await server.db('users').where({ username: 'shop-ci' }).first()).toBeDefined();
  });

  it('Ctrl-C at a confirmation is exit 130, and nothing is deleted', async () => {
    const t = await terminal(['user', 'delete', 'shop-ci']);
    await t.waitFor(/Delete user shop-ci/);
    await t.press('C-c');
    expect(await t.exitCode()).toBe(130);
    expect(await t.screen()).toContain('error: cancelled');
    expect(await server.db('users').where({ username: 'shop-ci' }).first()).toBeDefined();
  });

  it('Ctrl-C at a login prompt is exit 130, and nothing is stored', async () => {
    const home = await freshHome();
    const t = await terminal(['login', '--url', server.url], { HOME: home, REPOADMIN_URL: '', REPOADMIN_TOKEN: '' });
    await t.waitFor(/User name:/);
    await t.press('C-c');
    expect(await t.exitCode()).toBe(130);
    const stored = await terminal(['whoami'], { HOME: home, REPOADMIN_URL: '', REPOADMIN_TOKEN: '' });
    expect(await stored.exitCode()).toBe(4);
  });
});
