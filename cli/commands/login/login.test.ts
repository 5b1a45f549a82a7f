import { cliInvocation } from '../../invocation.js';
import { describe, expect, it } from 'vitest';
import { fakeApi, fakeDeps, scriptedPrompter, SERVER } from '../../../test/cli/fakes.js';
import { runLogin } from './login.js';

const answer = {
  token: 'new.token.value',
  userId: '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd',
  expiresAt: '2026-11-21T11:00:00.000Z',
  username: 'admin',
  role: 'ROLE_ADMIN' as const,
  projectName: null,
  mustChangePassword: false,
};

describe('runLogin', () => {
  it('asks for server, user name and password on a terminal and stores the token as the current login', async () => {
    const api = fakeApi({ generateToken: async () => answer });
    const prompter = scriptedPrompter([{ input: `${SERVER}/` }, { input: 'admin' }, { password: 's3cret-pass' }]);
    const deps = fakeDeps({ tty: true, api, prompter });
    const report = await runLogin({ passwordStdin: false }, deps);
    expect(api.calls).toEqual([{ name: 'generateToken', args: [{ username: 'admin', password: 's3cret-pass' }, SERVER] }]);
    expect(deps.config.data()).toEqual({
      current: SERVER,
      servers: {
        [SERVER]: { url: SERVER, username: 'admin', userId: answer.userId, token: answer.token, expiresAt: answer.expiresAt, projectName: null, role: 'ROLE_ADMIN' },
      },
    });
    expect(report.json).toEqual({ url: SERVER, username: 'admin' });
    expect(report.notes?.join('\n')).not.toContain('s3cret-pass');
    expect(prompter.remaining()).toBe(0);
  });

  it('takes everything from flags and the environment without prompting', async () => {
    const api = fakeApi({ generateToken: async () => answer });
    const deps = fakeDeps({ api, stdin: 'from-stdin-pw\n', settings: { url: SERVER } });
    await runLogin({ username: 'admin', passwordStdin: true }, deps);
    expect(api.calls[0]?.args).toEqual([{ username: 'admin', password: 'from-stdin-pw' }, SERVER]);
  });

  it('off a terminal, a missing user name is a usage error naming the flag and variable', async () => {
    const deps = fakeDeps({ env: { REPOADMIN_URL: SERVER } });
    await expect(runLogin({ passwordStdin: false }, deps)).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringContaining('--username or REPOADMIN_USERNAME'),
    });
  });

  it('off a terminal, a missing password names --password-stdin and REPOADMIN_PASSWORD', async () => {
    const deps = fakeDeps({ env: { REPOADMIN_URL: SERVER, REPOADMIN_USERNAME: 'admin' } });
    await expect(runLogin({ passwordStdin: false }, deps)).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringMatching(/--password-stdin.*REPOADMIN_PASSWORD/),
    });
  });

  it('never prompts when CI is set, even on a terminal', async () => {
    const deps = fakeDeps({ tty: true, env: { CI: 'true' } });
    await expect(runLogin({ passwordStdin: false }, deps)).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--url or REPOADMIN_URL') });
  });

  it('says when the password must be changed first', async () => {
    const api = fakeApi({ generateToken: async () => ({ ...answer, mustChangePassword: true }) });
    const deps = fakeDeps({ api, env: { REPOADMIN_URL: SERVER, REPOADMIN_USERNAME: 'admin', REPOADMIN_PASSWORD: 'password' } });
    const report = await runLogin({ passwordStdin: false }, deps);
    // Named as this process was started (cli/invocation.ts): under the test runner, node and its file.
    expect(report.notes?.[1]).toContain(`run ${cliInvocation(deps.env, process.argv[1]!, process.cwd())} user passwd`);
  });
});
