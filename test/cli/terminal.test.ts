// The first-day flow of an administrator, prompted in a real terminal (tmux), against the real
// server started as on a first start (admin/password, to be changed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertBuilt, BIN, freshHome, run } from './run.js';
import { skipping } from '../helpers/skip.js';
import { inTerminal, tmuxMissing, tmuxPath, type Terminal } from './terminal.js';

let server: TestServer;
let env: Record<string, string>;
const open: Terminal[] = [];
/** Added to the real time by the server's clock. */
let offsetMs = 0;

beforeAll(async () => {
  if (tmuxMissing()) return;
  assertBuilt();
  await tmuxPath();
  server = await startTestServer({ mustChangeAdminPassword: true, now: () => new Date(Date.now() + offsetMs) });
  env = { HOME: await freshHome() };
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

const missing = skipping('the terminal tests', tmuxMissing());

describe.skipIf(missing)('first-day administrator flow in a terminal', () => {
  it('login, change the admin password, add, list and delete a user, all prompted', async () => {
    const login = await terminal(['login']);
    await login.waitFor(/Server:/);
    await login.enter(server.url);
    await login.waitFor(/User name:/);
    await login.enter('admin');
    await login.waitFor(/Password for admin:/);
    await login.enter('password');
    expect(await login.exitCode()).toBe(0);
    const loginScreen = await login.screen();
    expect(loginScreen).toContain(`Logged in to ${server.url} as admin`);
    // Run as `node bin/repoadmin` (a bare `repoadmin` is not on PATH): the hint names it that way.
    const hint = loginScreen.replace(/\s+/g, '');
    expect([`runnode${BIN}userpasswd`, 'runnodebin/repoadminuserpasswd'].some((h) => hint.includes(`mustbechangedbeforeanythingelseworks:${h}`)), loginScreen).toBe(true);
    expect(loginScreen).not.toMatch(/\bpassword\b.*\bpassword\b/);

    const passwd = await terminal(['user', 'passwd']);
    await passwd.waitFor(/New password for admin:/);
    await passwd.enter('first-day-pass-1');
    await passwd.waitFor(/Repeat it:/);
    await passwd.enter('first-day-pass-1');
    expect(await passwd.exitCode()).toBe(0);
    expect(await passwd.screen()).not.toContain('first-day-pass-1');
    expect(await passwd.screen()).toContain('Logged in again as admin; the new token is stored');
    expect(await server.db('users').where({ username: 'admin' }).first()).toMatchObject({ must_change_password: false });

    const add = await terminal(['user', 'add', 'ci-shop']);
    await add.waitFor(/Project:/);
    await add.enter('shop');
    await add.waitFor(/Role \(admin or user\):/);
    await add.enter('user');
    await add.waitFor(/New password for ci-shop:/);
    await add.enter('shop-pass-123');
    await add.waitFor(/Repeat it:/);
    await add.enter('shop-pass-123');
    expect(await add.exitCode()).toBe(0);
    expect(await server.db('users').where({ username: 'ci-shop' }).first()).toMatchObject({ project_name: 'shop', role: 'ROLE_USER' });

    const list = await terminal(['user', 'list']);
    expect(await list.exitCode()).toBe(0);
    const table = await list.screen();
    expect(table).toMatch(/USERNAME\s+ROLE\s+PROJECT\s+CREATED\s+USER ID/);
    expect(table).toMatch(/ci-shop\s+ROLE_USER\s+shop\s+/);
    expect(await list.screen(true)).toContain('\u001b[');

    const plain = await terminal(['user', 'list'], { NO_COLOR: '1' });
    expect(await plain.exitCode()).toBe(0);
    expect(await plain.screen()).toMatch(/USERNAME\s+ROLE/);
    expect(await plain.screen(true)).not.toContain('\u001b[');

    const create = await terminal(['token', 'create', '--name', 'ci', '--user', 'ci-shop']);
    expect(await create.exitCode()).toBe(0);
    const made = await create.screen();
    expect(made).toMatch(/rpa_[A-Za-z0-9_-]{43}/);
    expect(made).toContain('It is shown only now');
    const tokens = await terminal(['token', 'list']);
    expect(await tokens.exitCode()).toBe(0);
    expect(await tokens.screen()).toMatch(/NAME\s+SCOPE\s+USER\s+PROJECT\s+CREATED\s+EXPIRES\s+LAST USED\s+ID/);
    expect(await tokens.screen()).toMatch(/ci\s+publish\s+ci-shop\s+shop\s+\S+\s+never\s+never\s+[0-9a-f-]{36}/);
    const revoke = await terminal(['token', 'revoke', 'ci', '--user', 'ci-shop']);
    await revoke.waitFor(/Revoke the publish token "ci" of ci-shop \(never used\)\? Pipelines using it stop working\./);
    await revoke.enter('y');
    expect(await revoke.exitCode()).toBe(0);
    expect(Number((await server.db('tokens').count({ n: '*' }).first())!.n)).toBe(0);

    const del = await terminal(['user', 'delete', 'ci-shop']);
    await del.waitFor(/Delete user ci-shop \(ROLE_USER, project shop\)\? This cannot be undone\./);
    await del.enter('y');
    expect(await del.exitCode()).toBe(0);
    expect(await server.db('users').where({ username: 'ci-shop' }).first()).toBeUndefined();
  });

  it('a login older than 15 minutes: token create asks for the password and makes the token with it', async () => {
    offsetMs = -16 * 60_000;
    try {
      const login = await run(['login', '--url', server.url, '--username', 'admin', '--password-stdin'], { home: env.HOME!, stdin: 'first-day-pass-1' });
      expect(login.code, login.stderr).toBe(0);
    } finally {
      offsetMs = 0;
    }
    const create = await terminal(['token', 'create', '--name', 'asked']);
    await create.waitFor(/Your login is not fresh enough to make a project token: password of admin:/);
    await create.enter('first-day-pass-1');
    expect(await create.exitCode()).toBe(0);
    const screen = await create.screen();
    expect(screen).toMatch(/rpa_[A-Za-z0-9_-]{43}/);
    expect(screen).not.toContain('first-day-pass-1');
    expect(await server.db('tokens').where({ name: 'asked' })).toHaveLength(1);
  });

  it('with CI set, the same terminal never prompts and names the missing flag (exit 2)', async () => {
    const t = await terminal(['user', 'delete', 'admin'], { CI: 'true' });
    expect(await t.exitCode()).toBe(2);
    expect(await t.screen()).toContain('pass --yes to confirm');
    expect(await server.db('users').where({ username: 'admin' }).first()).toBeDefined();
  });
});
