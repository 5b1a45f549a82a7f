import { describe, expect, it } from 'vitest';
import { credentials, fakeApi, fakeDeps, scriptedPrompter, SERVER } from '../../../test/cli/fakes.js';
import { parseRole, runUserAdd } from './add.js';
import { runUserDelete } from './delete.js';
import { runUserList } from './list.js';
import { runUserPasswd } from './passwd.js';

const ADMIN_ID = '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd';
const SHOP_ID = '3a6f8100-9979-4dae-bf68-2c6e74a37751';
const users = {
  users: [
    { userId: ADMIN_ID, username: 'admin', projectName: null, role: 'ROLE_ADMIN' as const, createdAt: '2026-11-21T06:00:00.000Z' },
    { userId: SHOP_ID, username: 'ci-shop', projectName: 'shop', role: 'ROLE_USER' as const, createdAt: '2026-11-21T06:01:00.000Z' },
  ],
};

describe('user add', () => {
  it('reads the role as admin or user', () => {
    expect(parseRole('admin')).toBe('ROLE_ADMIN');
    expect(parseRole('ROLE_USER')).toBe('ROLE_USER');
    expect(() => parseRole('root')).toThrow(/--role must be admin or user/);
  });

  it('creates the user with the password from stdin and prints the userId', async () => {
    const api = fakeApi({ createUser: async () => ({ userId: SHOP_ID, valid: true }) });
    const report = await runUserAdd({ username: 'ci-shop', project: 'shop', role: 'ROLE_USER', passwordStdin: true }, fakeDeps({ api, stdin: 'a-long-pass\n' }));
    expect(api.calls[0]?.args).toEqual([{ username: 'ci-shop', password: 'a-long-pass', projectName: 'shop', role: 'ROLE_USER' }]);
    expect(report.lines).toEqual([SHOP_ID]);
    expect(JSON.stringify(report)).not.toContain('a-long-pass');
  });

  it('asks for project, role and the password twice on a terminal', async () => {
    const api = fakeApi({ createUser: async () => ({ userId: SHOP_ID, valid: true }) });
    const prompter = scriptedPrompter([{ input: 'shop' }, { input: 'user' }, { password: 'pw-123456' }, { password: 'pw-123456' }]);
    await runUserAdd({ username: 'ci-shop', passwordStdin: false }, fakeDeps({ tty: true, api, prompter }));
    expect(api.calls[0]?.args[0]).toMatchObject({ projectName: 'shop', role: 'ROLE_USER', password: 'pw-123456' });
  });

  it('refuses two different passwords and creates nothing', async () => {
    const api = fakeApi();
    const prompter = scriptedPrompter([{ password: 'pw-123456' }, { password: 'pw-654321' }]);
    await expect(runUserAdd({ username: 'x', project: 'p', role: 'ROLE_USER', passwordStdin: false }, fakeDeps({ tty: true, api, prompter }))).rejects.toThrow(/differ/);
    expect(api.calls).toEqual([]);
  });

  it('off a terminal, a missing --project or --role is a usage error', async () => {
    await expect(runUserAdd({ username: 'x', role: 'ROLE_USER', passwordStdin: true }, fakeDeps())).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--project') });
    await expect(runUserAdd({ username: 'x', project: 'p', passwordStdin: true }, fakeDeps())).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--role') });
    await expect(runUserAdd({ username: 'x', project: 'p', role: 'ROLE_USER', passwordStdin: false }, fakeDeps())).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--password-stdin') });
  });
});

describe('user passwd', () => {
  it("changes one's own password and stores the fresh token of the answer", async () => {
    const api = fakeApi({
      credentials: async () => credentials(),
      serverUrl: async () => SERVER,
      changePassword: async () => ({ userId: ADMIN_ID, valid: true, token: 'fresh.token.x', expiresAt: '2026-11-21T12:00:00.000Z' }),
    });
    const prompter = scriptedPrompter([{ password: 'new-pass-1' }, { password: 'new-pass-1' }]);
    const deps = fakeDeps({ tty: true, api, prompter });
    const report = await runUserPasswd({ passwordStdin: false }, deps);
    expect(api.calls.find((c) => c.name === 'changePassword')?.args).toEqual([ADMIN_ID, 'new-pass-1']);
    expect(await deps.config.current()).toEqual({ url: SERVER, username: 'admin', userId: ADMIN_ID, token: 'fresh.token.x', expiresAt: '2026-11-21T12:00:00.000Z' });
    expect(report.json).toEqual({ userId: ADMIN_ID, valid: true });
  });

  it('logs in again with the new password when the answer carries no token', async () => {
    const api = fakeApi({
      credentials: async () => credentials(),
      serverUrl: async () => SERVER,
      changePassword: async () => ({ userId: ADMIN_ID, valid: true }),
      generateToken: async () => ({ token: 'relogin.token', expiresAt: '2026-11-21T13:00:00.000Z', userId: ADMIN_ID, username: 'admin', role: 'ROLE_ADMIN', projectName: null, mustChangePassword: false }),
    });
    const deps = fakeDeps({ api, stdin: 'new-pass-2' });
    await runUserPasswd({ passwordStdin: true }, deps);
    expect(api.calls.find((c) => c.name === 'generateToken')?.args).toEqual([{ username: 'admin', password: 'new-pass-2' }, SERVER]);
    expect((await deps.config.current())?.token).toBe('relogin.token');
  });

  it("takes its own id in upper case for one's own password, and stores the fresh token", async () => {
    const api = fakeApi({
      credentials: async () => credentials(),
      serverUrl: async () => SERVER,
      changePassword: async () => ({ userId: ADMIN_ID, valid: true, token: 'fresh.token.y', expiresAt: '2026-11-21T12:00:00.000Z' }),
    });
    const deps = fakeDeps({ api, stdin: 'new-pass-3' });
    await runUserPasswd({ user: ADMIN_ID.toUpperCase(), passwordStdin: true }, deps);
    expect(api.calls.find((c) => c.name === 'changePassword')?.args).toEqual([ADMIN_ID, 'new-pass-3']);
    expect((await deps.config.current())?.token).toBe('fresh.token.y');
  });

  it("finds another user by name and does not touch the caller's stored login", async () => {
    const api = fakeApi({
      credentials: async () => credentials(),
      listUsers: async () => users,
      changePassword: async () => ({ userId: SHOP_ID, valid: true }),
    });
    const deps = fakeDeps({ api, stdin: 'shop-pass-9' });
    await runUserPasswd({ user: 'ci-shop', passwordStdin: true }, deps);
    expect(api.calls.find((c) => c.name === 'changePassword')?.args).toEqual([SHOP_ID, 'shop-pass-9']);
    expect(deps.config.data()).toEqual({ servers: {} });
  });

  it('an unknown user name is not_found (exit 3)', async () => {
    const api = fakeApi({ credentials: async () => credentials(), listUsers: async () => users });
    await expect(runUserPasswd({ user: 'ghost', passwordStdin: true }, fakeDeps({ api, stdin: 'x' }))).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('user delete', () => {
  it('asks before deleting on a terminal', async () => {
    const api = fakeApi({ listUsers: async () => users, deleteUser: async () => undefined });
    const prompter = scriptedPrompter([{ confirm: true }]);
    const report = await runUserDelete({ user: 'ci-shop', yes: false }, fakeDeps({ tty: true, api, prompter }));
    expect(prompter.asked[0]).toContain('Delete user ci-shop (ROLE_USER, project shop)?');
    expect(api.calls.at(-1)).toEqual({ name: 'deleteUser', args: [SHOP_ID] });
    expect(report.json).toEqual({ userId: SHOP_ID, username: 'ci-shop' });
  });

  it('deletes nothing when the answer is no', async () => {
    const api = fakeApi({ listUsers: async () => users });
    const prompter = scriptedPrompter([{ confirm: false }]);
    await expect(runUserDelete({ user: SHOP_ID, yes: false }, fakeDeps({ tty: true, api, prompter }))).rejects.toThrow(/nothing was deleted/);
    expect(api.calls.map((c) => c.name)).toEqual(['listUsers']);
  });

  it('needs --yes off a terminal', async () => {
    const api = fakeApi({ listUsers: async () => users });
    await expect(runUserDelete({ user: 'ci-shop', yes: false }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--yes') });
  });
});

describe('user list', () => {
  it('gives the rows of a table and the API answer as JSON', async () => {
    const report = await runUserList({}, fakeDeps({ api: fakeApi({ listUsers: async () => users }) }));
    expect(report.json).toEqual(users);
    expect(report.table?.rows[1]).toEqual(['ci-shop', 'ROLE_USER', 'shop', '2026-11-21T06:01:00.000Z', SHOP_ID]);
  });
});
