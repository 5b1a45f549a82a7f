// The built CLI, as a real process, against the real server on an ephemeral port: exit codes,
// stdout, stderr and what the server stored, for every command.
import { readdir, stat, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, DEFAULT_ADMIN_ID, startTestServer, type TestServer } from '../helpers/server.js';
import { assertBuilt, freshHome, run } from './run.js';

let server: TestServer;
let shopToken: string;
const SHOP_PASSWORD = 'shop-pass-123';

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer();
  const admin = await server.adminToken();
  const created = await server.request('POST', '/v1/users', { token: admin, body: { username: 'ci-shop', password: SHOP_PASSWORD, projectName: 'shop', role: 'ROLE_USER' } });
  expect(created.status).toBe(201);
  const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'ci-shop', password: SHOP_PASSWORD } });
  shopToken = login.body.token;
});

afterAll(async () => {
  await server?.close();
});

/** Logs in as admin with --password-stdin into a fresh HOME and returns that HOME. */
async function adminHome(): Promise<string> {
  const home = await freshHome();
  const result = await run(['login', '--url', server.url, '--username', 'admin', '--password-stdin'], { home, stdin: ADMIN_PASSWORD });
  expect(result).toMatchObject({ code: 0, stdout: '' });
  return home;
}

describe('pipeline recipe (no stored state)', () => {
  it('publishes with REPOADMIN_TOKEN and the build server variables, and search --latest --field gives the version', async () => {
    const home = await freshHome();
    const env = { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: shopToken, GIT_BRANCH: 'origin/main', GIT_URL: 'https://ci:secret@git.example.com/acme/g.git' };
    const published = await run(['publish', '--group', 'g', '--artifact', 'a', '--version', '1.2.3', '--latest'], { home, env });
    expect(published.stderr).toBe('Created g:a:1.2.3 (project shop, branch main, marked latest).\n');
    expect(published.code).toBe(0);
    const uid = published.stdout.trim();
    const row = await server.db('versions').where({ uid }).first();
    expect(row).toMatchObject({ project_name: 'shop', branch: 'main', group_id: 'g', artifact_id: 'a', version: '1.2.3', latest_version: true, repository_url: 'https://git.example.com/acme/g.git' });

    const searched = await run(['search', '--group', 'g', '--artifact', 'a', '--branch', 'main', '--latest', '--field', 'version'], { home, env: { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: shopToken } });
    expect(searched).toEqual({ code: 0, stdout: '1.2.3\n', stderr: '' });
    expect(await readdir(home)).toEqual([]);
  });

  it('works the same with REPOADMIN_USERNAME and REPOADMIN_PASSWORD, logging in on the fly', async () => {
    const home = await freshHome();
    const env = { REPOADMIN_URL: server.url, REPOADMIN_USERNAME: 'ci-shop', REPOADMIN_PASSWORD: SHOP_PASSWORD, BRANCH_NAME: 'release' };
    const published = await run(['publish', '--group', 'g', '--artifact', 'b', '--version', '2.0.0', '--latest'], { home, env });
    expect(published.code).toBe(0);
    const again = await run(['publish', '--group', 'g', '--artifact', 'b', '--version', '2.0.0', '--latest', '--json'], { home, env });
    expect(JSON.parse(again.stdout)).toEqual({ _status: true, uid: published.stdout.trim(), created: false });
    expect(again.stderr).toMatch(/^Updated g:b:2.0.0/);
    expect(await server.db('versions').where({ group_id: 'g', artifact_id: 'b' }).count({ n: '*' })).toEqual([{ n: expect.anything() }]);
    expect(Number((await server.db('versions').where({ group_id: 'g', artifact_id: 'b' }).count({ n: '*' }))[0]!.n)).toBe(1);
    const searched = await run(['search', '--group', 'g', '--artifact', 'b', '--branch', 'release', '--latest', '--field', 'version'], { home, env });
    expect(searched).toEqual({ code: 0, stdout: '2.0.0\n', stderr: '' });
    expect(await readdir(home)).toEqual([]);
  });
});

describe('login, whoami, token, logout', () => {
  it('stores the login in a 0600 file and uses it', async () => {
    const home = await adminHome();
    const file = join(home, '.config/repoadmin/config.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(file, 'utf8'));
    expect(stored.current).toBe(server.url);
    expect(stored.servers[server.url]).toMatchObject({ url: server.url, username: 'admin', userId: DEFAULT_ADMIN_ID });
    expect(JSON.stringify(stored)).not.toContain(ADMIN_PASSWORD);

    const who = await run(['whoami', '--json'], { home });
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toEqual({ username: 'admin', userId: DEFAULT_ADMIN_ID, role: 'ROLE_ADMIN', projectName: null, url: server.url, expiresAt: stored.servers[server.url].expiresAt });
    const piped = await run(['whoami'], { home });
    expect(piped.stdout).toContain('user\tadmin\n');

    const token = await run(['token'], { home });
    expect(token.stdout).toBe(`${stored.servers[server.url].token}\n`);
    const me = await server.request('GET', '/v1/users/me', { token: token.stdout.trim() });
    expect(me.body.username).toBe('admin');

    const out = await run(['logout', '--json'], { home });
    expect(JSON.parse(out.stdout)).toEqual({ url: server.url, username: 'admin' });
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ servers: {} });
    const after = await run(['whoami'], { home });
    expect(after.code).toBe(4);
    expect(after.stderr).toContain('error: not logged in: run repoadmin login --url URL');
  });

  it('wrong credentials are rejected with exit 4', async () => {
    const result = await run(['login', '--url', server.url, '--username', 'admin', '--password-stdin'], { home: await freshHome(), stdin: 'wrong-password' });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^error: /);
    expect(result.stderr).not.toContain('wrong-password');
  });

  it('--verbose logs requests with the token masked and never the password', async () => {
    const home = await freshHome();
    const env = { REPOADMIN_URL: server.url, REPOADMIN_USERNAME: 'ci-shop', REPOADMIN_PASSWORD: SHOP_PASSWORD };
    const result = await run(['whoami', '--verbose'], { home, env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('> POST');
    expect(result.stderr).toMatch(/Authorization: Bearer .{6}…\(\d+ chars\)/);
    expect(result.stderr).not.toContain(SHOP_PASSWORD);
    const token = (await run(['token'], { home, env })).stdout.trim();
    expect(result.stderr).not.toContain(token.slice(10));
  });
});

describe('user commands (non-interactive)', () => {
  it('add, list, passwd and delete, with what the server stored', async () => {
    const home = await adminHome();
    const added = await run(['user', 'add', 'ci-web', '--project', 'web', '--role', 'user', '--password-stdin'], { home, stdin: 'web-pass-1234\n' });
    expect(added.code).toBe(0);
    const row = await server.db('users').where({ username: 'ci-web' }).first();
    expect(row).toMatchObject({ id: added.stdout.trim(), project_name: 'web', role: 'ROLE_USER' });
    expect(added.stderr).toBe('Created user ci-web (ROLE_USER, project web).\n');

    const list = await run(['user', 'list'], { home });
    expect(list.stdout.split('\n')).toContainEqual(expect.stringMatching(new RegExp(`^ci-web\tROLE_USER\tweb\t[^\t]+\t${row.id}$`)));
    const json = JSON.parse((await run(['user', 'list', '--json'], { home })).stdout);
    expect(json.users.map((u: { username: string }) => u.username)).toContain('ci-web');

    const passwd = await run(['user', 'passwd', 'ci-web', '--password-stdin'], { home, stdin: 'web-pass-5678' });
    expect(passwd).toMatchObject({ code: 0, stderr: 'Changed the password of ci-web.\n' });
    const relogin = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'ci-web', password: 'web-pass-5678' } });
    expect(relogin.status).toBe(200);

    const refused = await run(['user', 'delete', 'ci-web'], { home });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect(await server.db('users').where({ username: 'ci-web' }).first()).toBeDefined();

    const deleted = await run(['user', 'delete', 'ci-web', '--yes'], { home });
    expect(deleted).toMatchObject({ code: 0, stderr: 'Deleted user ci-web.\n' });
    expect(await server.db('users').where({ username: 'ci-web' }).first()).toBeUndefined();

    const missing = await run(['user', 'delete', 'ci-web', '--yes'], { home });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('no user named ci-web');
  });

  it("own password: logs in again and stores the new token; the old one stops working", async () => {
    const home = await freshHome();
    await run(['user', 'add', 'ci-own', '--project', 'own', '--role', 'user', '--password-stdin'], { home: await adminHome(), stdin: 'own-pass-1234' });
    const login = await run(['login', '--url', server.url, '--username', 'ci-own', '--password-stdin'], { home, stdin: 'own-pass-1234' });
    expect(login.code).toBe(0);
    const oldToken = (await run(['token'], { home })).stdout.trim();
    const changed = await run(['user', 'passwd', '--password-stdin'], { home, stdin: 'own-pass-5678' });
    expect(changed.code).toBe(0);
    expect(changed.stderr).toContain('the new token is stored');
    const newToken = (await run(['token'], { home })).stdout.trim();
    expect(newToken).not.toBe(oldToken);
    expect((await server.request('GET', '/v1/users/me', { token: oldToken })).status).toBe(401);
    expect((await run(['whoami', '--json'], { home })).code).toBe(0);
  });
});

describe('search and publish', () => {
  it('search prints rows as TSV when piped, the API JSON with --json, and nothing found is 0 without --latest', async () => {
    const env = { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: shopToken };
    const home = await freshHome();
    await run(['publish', '--group', 'h', '--artifact', 'x', '--version', '1.0.0', '--branch', 'main'], { home, env });
    const tsv = await run(['search', '--group', 'h'], { home, env: { REPOADMIN_URL: server.url } });
    expect(tsv.stdout).toMatch(/^shop\tmain\th\tx\t1\.0\.0\tLIBRARY\t\t\S+\t[0-9a-f-]{36}\n$/);
    const json = await run(['search', '--group', 'h', '--json'], { home, env: { REPOADMIN_URL: server.url } });
    const direct = await server.request('POST', '/v1/repositories/search', { body: { groupId: 'h' } });
    expect(JSON.parse(json.stdout)).toEqual(direct.body);
    const none = await run(['search', '--group', 'nothing-here'], { home, env: { REPOADMIN_URL: server.url } });
    expect(none).toEqual({ code: 0, stdout: '', stderr: 'No versions match groupId nothing-here.\n' });
  });

  it('--latest --field with several projects fails (exit 1) naming them', async () => {
    const home = await adminHome();
    for (const project of ['p1', 'p2']) {
      const r = await run(['publish', '--project', project, '--group', 'multi', '--artifact', 'm', '--version', '1', '--branch', 'main', '--latest'], { home });
      expect(r.code).toBe(0);
    }
    const result = await run(['search', '--group', 'multi', '--artifact', 'm', '--latest', '--field', 'version'], { home });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: --latest matched 2 records \(.*\): add --branch or --project to pick one\n$/);
    expect(result.stderr).toContain('project p1 branch main');
    expect(result.stderr).toContain('project p2 branch main');
  });

  it('a record the server rejects is exit 1 with its message', async () => {
    const env = { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: shopToken };
    const result = await run(['publish', '--group', 'g', '--artifact', 'a', '--version', '9', '--branch', 'main', '--repository-url', 'not a url'], { home: await freshHome(), env });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: --repository-url: must be an http(s), ssh or scp-style git address\n');
  });
});

describe('exit codes', () => {
  it('2: bad flags, and a value that cannot be prompted for', async () => {
    const home = await freshHome();
    const unknown = await run(['search', '--colour'], { home });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--colour'");
    const noUser = await run(['login', '--url', server.url], { home });
    expect(noUser.code).toBe(2);
    expect(noUser.stderr).toContain('--username or REPOADMIN_USERNAME');
    const noRole = await run(['user', 'add', 'x', '--project', 'p', '--password-stdin'], { home, stdin: 'x', env: { REPOADMIN_URL: server.url } });
    expect(noRole.code).toBe(2);
    expect(noRole.stderr).toContain('--role');
  });

  it('3: search --latest with no match', async () => {
    const result = await run(['search', '--group', 'none', '--artifact', 'none', '--latest', '--field', 'version'], { home: await freshHome(), env: { REPOADMIN_URL: server.url } });
    expect(result).toEqual({ code: 3, stdout: '', stderr: 'error: no latest version matches groupId none, artifactId none\n' });
  });

  it('4: not logged in', async () => {
    const result = await run(['user', 'list'], { home: await freshHome(), env: { REPOADMIN_URL: server.url } });
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`error: not logged in to ${server.url}: run repoadmin login, or set REPOADMIN_TOKEN (or REPOADMIN_USERNAME and REPOADMIN_PASSWORD; in a pipeline, REPOADMIN_ID_TOKEN or GitHub Actions' id-token permission)\n`);
  });

  it('4: a 403 from the server', async () => {
    const result = await run(['user', 'list'], { home: await freshHome(), env: { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: shopToken } });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^error: .+\n$/);
  });

  it('4: an expired stored token without credentials in the environment', async () => {
    // The server's clock runs an hour behind: the login's token (its lifetime a minute) was issued an
    // hour ago as the command line's clock has it, and expired long since, with no time to wait.
    let behindMs = 3_600_000;
    const short = await startTestServer({ config: { jwt: { ttlSeconds: 60 } }, now: () => new Date(Date.now() - behindMs) });
    try {
      const home = await freshHome();
      expect((await run(['login', '--url', short.url, '--username', 'admin', '--password-stdin'], { home, stdin: ADMIN_PASSWORD })).code).toBe(0);
      const stored = JSON.parse(await readFile(join(home, '.config/repoadmin/config.json'), 'utf8'));
      expect(Date.parse(stored.servers[short.url].expiresAt)).toBeLessThan(Date.now());
      const result = await run(['whoami'], { home });
      expect(result).toEqual({ code: 4, stdout: '', stderr: 'error: your session expired: run repoadmin login\n' });
      // Back on time: a login on the fly with the environment's credentials gets a token that is good.
      behindMs = 0;
      const rescued = await run(['whoami', '--json'], { home, env: { REPOADMIN_USERNAME: 'admin', REPOADMIN_PASSWORD: ADMIN_PASSWORD } });
      expect(rescued.code).toBe(0);
    } finally {
      await short.close();
    }
  });

  it('5: server down, with what to do', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const result = await run(['search', '--group', 'g'], { home: await freshHome(), env: { REPOADMIN_URL: url } });
    expect(result).toEqual({
      code: 5,
      stdout: '',
      stderr: `error: cannot reach ${url} (connection refused). Is the server running? Start one with: repoadmin server\n`,
    });
  });
});

describe('help', () => {
  const commands = [[], ['login'], ['logout'], ['whoami'], ['token'], ['user'], ['user', 'add'], ['user', 'passwd'], ['user', 'delete'], ['user', 'list'], ['publish'], ['search']];
  it.each(commands.map((c) => [c.join(' ') || '(none)', c]))('repoadmin %s --help shows a usage line and an example', async (_name, command) => {
    const result = await run([...(command as string[]), '--help'], { home: await freshHome() });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: repoadmin /);
    expect(result.stdout).toMatch(/\nExamples?:\n {2}\S/);
  });

  it('--version prints the version; publish --version is the record version', async () => {
    const result = await run(['--version'], { home: await freshHome() });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
