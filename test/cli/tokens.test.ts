// Project tokens through the built CLI against the real server: an administrator makes one for the
// project user with `TOKEN=$(repoadmin token create ...)`, a pipeline in a fresh home folder uses
// it with nothing else stored, `login --with-token` keeps one, and a revoked one is refused.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, type TestServer, startTestServer } from '../helpers/server.js';
import { assertBuilt, freshHome, run } from './run.js';

let server: TestServer;
let adminHome: string;
/** Added to the real time by the server's clock. */
let offsetMs = 0;

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer({ now: () => new Date(Date.now() + offsetMs) });
  const created = await server.request('POST', '/v1/users', {
    token: await server.adminToken(),
    body: { username: 'shop-ci', password: 'shop-ci-secret', projectName: 'shop', role: 'ROLE_USER' },
  });
  expect(created.status).toBe(201);
  adminHome = await freshHome();
  const login = await run(['login', '--url', server.url, '--username', 'admin', '--password-stdin'], { home: adminHome, stdin: ADMIN_PASSWORD });
  expect(login.code).toBe(0);
});

afterAll(async () => {
  await server?.close();
});

describe('project tokens from the command line', () => {
  it('token create prints only the token; a pipeline with REPOADMIN_URL and REPOADMIN_TOKEN publishes and searches in a fresh home', async () => {
    const made = await run(['token', 'create', '--name', 'ci', '--user', 'shop-ci'], { home: adminHome });
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^rpa_[A-Za-z0-9_-]{43}\n$/);
    const token = made.stdout.trim();
    expect(made.stderr).toContain('Made the publish token "ci" of shop-ci, project shop, without expiry.');
    expect(made.stderr).toContain('shown only now');
    const row = await server.db('tokens').where({ name: 'ci' }).first();
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));

    const home = await freshHome();
    const env = { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: token, GIT_BRANCH: 'origin/main' };
    const published = await run(['publish', '--group', 'pt', '--artifact', 'app', '--version', '2.0.0', '--latest'], { home, env });
    expect(published).toMatchObject({ code: 0, stderr: 'Created pt:app:2.0.0 (project shop, branch main, marked latest).\n' });
    const searched = await run(['search', '--group', 'pt', '--artifact', 'app', '--branch', 'main', '--latest', '--field', 'version'], { home, env });
    expect(searched).toEqual({ code: 0, stdout: '2.0.0\n', stderr: '' });
    const who = await run(['whoami', '--json'], { home, env });
    expect(JSON.parse(who.stdout)).toMatchObject({ username: 'shop-ci', role: 'ROLE_USER', projectName: 'shop' });
    expect(await readdir(home)).toEqual([]);

    // Another project's publish is refused, with the server's reason.
    const other = await run(['publish', '--group', 'pt', '--artifact', 'app', '--version', '2.0.1', '--project', 'other'], { home, env });
    expect(other.code).toBe(4);
    expect(other.stderr).toContain('may publish only to project "shop"');
    // So is user management.
    const users = await run(['user', 'list'], { home, env });
    expect(users.code).toBe(4);
    expect(users.stderr).toContain('a project token cannot manage users, passwords or tokens');
  });

  it('a read token searches but cannot publish', async () => {
    const made = await run(['token', 'create', '--name', 'dashboard', '--user', 'shop-ci', '--scope', 'read', '--expires-in-days', '30'], { home: adminHome });
    expect(made.code).toBe(0);
    expect(made.stderr).toMatch(/read token "dashboard" of shop-ci, project shop, valid until \d{4}-/);
    const env = { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: made.stdout.trim() };
    const home = await freshHome();
    expect((await run(['search', '--group', 'pt'], { home, env })).code).toBe(0);
    const publish = await run(['publish', '--group', 'pt', '--artifact', 'app', '--version', '3.0.0', '--branch', 'main'], { home, env });
    expect(publish.code).toBe(4);
    expect(publish.stderr).toContain('has the scope read');
  });

  it('token list gives TSV when piped and the API JSON with --json, never the secret', async () => {
    const piped = await run(['token', 'list', '--user', 'shop-ci'], { home: adminHome });
    expect(piped.code).toBe(0);
    const lines = piped.stdout.trim().split('\n');
    expect(lines.map((l) => l.split('\t').slice(0, 4).join(' '))).toEqual(['ci publish shop-ci shop', 'dashboard read shop-ci shop']);
    // ci was used by the pipeline above: its last use is a date.
    expect(lines[0]!.split('\t')[6]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(piped.stdout).not.toContain('rpa_');
    const json = JSON.parse((await run(['token', 'list', '--json'], { home: adminHome })).stdout);
    expect(json.tokens.map((t: { name: string }) => t.name)).toEqual(['ci', 'dashboard']);
  });

  it('login --with-token stores a project token; token prints it; revoke needs --yes off a terminal and then the token is refused', async () => {
    const token = (await run(['token', 'create', '--name', 'kept', '--user', 'shop-ci'], { home: adminHome })).stdout.trim();
    const home = await freshHome();
    const login = await run(['login', '--url', server.url, '--with-token'], { home, stdin: `${token}\n` });
    expect(login).toMatchObject({ code: 0, stdout: '' });
    expect(login.stderr).toContain('as shop-ci (ROLE_USER, project shop) with a project token');
    const stored = JSON.parse(await readFile(join(home, '.config/repoadmin/config.json'), 'utf8'));
    expect(stored.servers[server.url]).toEqual({
      url: server.url,
      username: 'shop-ci',
      userId: expect.any(String),
      token,
      expiresAt: null,
      projectName: 'shop',
      role: 'ROLE_USER',
    });
    expect((await run(['token'], { home })).stdout).toBe(`${token}\n`);
    expect((await run(['publish', '--group', 'pt', '--artifact', 'kept', '--version', '1.0.0', '--branch', 'main'], { home })).code).toBe(0);

    const unconfirmed = await run(['token', 'revoke', 'kept', '--user', 'shop-ci'], { home: adminHome });
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('--yes');
    const revoked = await run(['token', 'revoke', 'kept', '--user', 'shop-ci', '--yes'], { home: adminHome });
    expect(revoked).toMatchObject({ code: 0, stderr: 'Revoked the token "kept" of shop-ci.\n' });

    const after = await run(['publish', '--group', 'pt', '--artifact', 'kept', '--version', '1.0.1', '--branch', 'main'], { home });
    expect(after.code).toBe(4);
    expect(after.stderr).toMatch(/the project token was revoked at .*: run repoadmin login/);
    const missing = await run(['token', 'revoke', 'kept', '--user', 'shop-ci', '--yes'], { home: adminHome });
    expect(missing.code).toBe(3);
  });

  it("token revoke --all --user revokes every token of the user at once (after a leaked password)", async () => {
    const tokens: string[] = [];
    for (const name of ['leak-a', 'leak-b']) {
      const made = await run(['token', 'create', '--name', name, '--user', 'shop-ci'], { home: adminHome });
      expect(made.code, made.stderr).toBe(0);
      tokens.push(made.stdout.trim());
    }
    const unconfirmed = await run(['token', 'revoke', '--all', '--user', 'shop-ci'], { home: adminHome });
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('--yes');
    const both = await run(['token', 'revoke', 'leak-a', '--all', '--user', 'shop-ci', '--yes'], { home: adminHome });
    expect(both.code).toBe(2);

    // With the tokens the tests before made for shop-ci: all of them.
    const before = JSON.parse((await run(['token', 'list', '--user', 'shop-ci', '--json'], { home: adminHome })).stdout) as { tokens: unknown[] };
    expect(before.tokens.length).toBeGreaterThanOrEqual(2);
    const revoked = await run(['token', 'revoke', '--all', '--user', 'shop-ci', '--yes'], { home: adminHome });
    expect(revoked).toMatchObject({ code: 0, stderr: `Revoked ${before.tokens.length} project tokens of shop-ci.\n` });
    expect(JSON.parse((await run(['token', 'list', '--user', 'shop-ci', '--json'], { home: adminHome })).stdout)).toMatchObject({ tokens: [] });
    for (const token of tokens) {
      const home = await freshHome();
      const env = { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: token };
      const after = await run(['publish', '--project', 'shop', '--group', 'pt', '--artifact', 'leak', '--version', '1.0.0', '--branch', 'main'], { home, env });
      expect(after.code).toBe(4);
      expect(after.stderr).toMatch(/the project token was revoked at /);
    }
    const none = await run(['token', 'revoke', '--all', '--user', 'shop-ci', '--yes', '--json'], { home: adminHome });
    expect(JSON.parse(none.stdout)).toMatchObject({ username: 'shop-ci', revoked: 0 });
  });

  it('a wrong token given to login --with-token is refused and nothing is stored', async () => {
    const home = await freshHome();
    const login = await run(['login', '--url', server.url, '--with-token'], { home, stdin: 'rpa_not-a-token-of-this-server' });
    expect(login.code).toBe(4);
    expect(login.stderr).toContain('not known to this server');
    const file = join(home, '.config/repoadmin/config.json');
    const stored = await readFile(file, 'utf8').then((text) => JSON.parse(text), () => ({ servers: {} }));
    expect(stored.servers).toEqual({});
  });

  it('token list fetches every page; --page and --size ask for one; revoke finds a token on a later page', async () => {
    const admin = await server.adminToken();
    const shop = await server.db('users').where({ username: 'shop-ci' }).first();
    // 130 tokens of two users: more than the server's largest page (100), made by the API for speed.
    const made = await Promise.all(
      Array.from({ length: 130 }, (_, i) =>
        server.request('POST', '/v1/tokens', { token: admin, body: { name: `bulk-${String(i).padStart(3, '0')}`, scope: 'read', userId: i < 70 ? undefined : shop.id } }),
      ),
    );
    expect(made.map((res) => res.status)).toEqual(made.map(() => 201));
    const all = JSON.parse((await run(['token', 'list', '--json'], { home: adminHome })).stdout) as { tokens: { id: string; name: string }[] };
    const total = Number((await server.db('tokens').count({ n: '*' }).first())!.n);
    expect(total).toBeGreaterThanOrEqual(130);
    expect(all.tokens).toHaveLength(total);
    expect(new Set(all.tokens.map((t) => t.id)).size).toBe(total);

    const page = await run(['token', 'list', '--page', '2', '--size', '50'], { home: adminHome });
    expect(page.code).toBe(0);
    expect(page.stdout.trim().split('\n')).toHaveLength(50);
    expect(page.stderr).toContain(`Page 2 of ${Math.ceil(total / 50)} (${total} tokens): --page 3 for the next`);
    const badSize = await run(['token', 'list', '--size', '101'], { home: adminHome });
    expect(badSize.code).toBe(2);

    // By id, among everyone's: shop-ci's come after admin's, so its last one is on the second page of 100.
    const last = all.tokens.find((t) => t.name === 'bulk-129')!;
    expect(all.tokens.indexOf(last)).toBeGreaterThanOrEqual(100);
    const revoked = await run(['token', 'revoke', last.id, '--yes'], { home: adminHome });
    expect(revoked).toMatchObject({ code: 0, stderr: 'Revoked the token "bulk-129" of shop-ci.\n' });
    await server.db('tokens').where('name', 'like', 'bulk-%').delete();
  });
});

describe('a fresh login to make a project token', () => {
  let staleHome: string;

  beforeAll(async () => {
    // A login made 16 minutes ago (by the server's clock), still valid for 44 more.
    staleHome = await freshHome();
    offsetMs = -16 * 60_000;
    try {
      const login = await run(['login', '--url', server.url, '--username', 'admin', '--password-stdin'], { home: staleHome, stdin: ADMIN_PASSWORD });
      expect(login.code).toBe(0);
    } finally {
      offsetMs = 0;
    }
  });

  it('off a terminal, a login older than 15 minutes fails with exit 4 naming --password-stdin, and nothing is made', async () => {
    const refused = await run(['token', 'create', '--name', 'stale', '--user', 'shop-ci'], { home: staleHome });
    expect(refused.code).toBe(4);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('making a project token needs a fresh login');
    expect(refused.stderr).toContain('Pass the password of admin on standard input with --password-stdin, or run repoadmin login first (no terminal to ask on)');
    expect(await server.db('tokens').where({ name: 'stale' })).toEqual([]);
    // Everything else still works with that login.
    expect((await run(['token', 'list'], { home: staleHome })).code).toBe(0);
  });

  it('--password-stdin sends the password when the server asks for it, and the token is made', async () => {
    const made = await run(['token', 'create', '--name', 'stale', '--user', 'shop-ci', '--password-stdin'], { home: staleHome, stdin: `${ADMIN_PASSWORD}\n` });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^rpa_[A-Za-z0-9_-]{43}\n$/);
    expect(made.stderr).not.toContain(ADMIN_PASSWORD);
    expect(await server.db('tokens').where({ name: 'stale' })).toHaveLength(1);
  });

  it('a wrong password on standard input: exit 4, said so, nothing made', async () => {
    const wrong = await run(['token', 'create', '--name', 'stale-2', '--user', 'shop-ci', '--password-stdin'], { home: staleHome, stdin: 'not-the-password' });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('wrong password for admin: no project token was made');
    expect(await server.db('tokens').where({ name: 'stale-2' })).toEqual([]);
    await server.db('login_attempts').delete();
  });
});
