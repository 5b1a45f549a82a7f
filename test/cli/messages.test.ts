// What a newcomer meets first, through the built binary against the real server: addresses given
// with the API prefix, answers from something that is not a registry, no login at all, messages
// that name the flags typed, and help that reads at 80 columns.
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTINGS } from '../../server/settings.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import { assertBuilt, freshHome, run } from './run.js';

let server: TestServer;
let admin: string;

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer();
  admin = await server.adminToken();
  const published = await server.request('POST', '/v1/repositories', {
    token: admin,
    body: { projectName: 'shop', branch: 'main', artifact: { groupId: 'com.example.shop', artifactId: 'shop-api', version: '1.4.0' }, latestVersion: true },
  });
  expect(published.status).toBe(201);
});

afterAll(async () => {
  await server?.close();
});

/** A web server that is not a registry: every path answers `status` (404) with `body`. */
async function notARegistry(type: string, body: string, status = 404, headers: Record<string, string> = {}): Promise<{ url: string; close(): Promise<void>; requests(): number }> {
  let requests = 0;
  const other = http.createServer((_req, res) => {
    requests++;
    res.writeHead(status, { 'content-type': type, ...headers }).end(body);
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(other.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => other.close(() => resolve())),
    requests: () => requests,
  };
}

const latest = ['search', '--group', 'com.example.shop', '--artifact', 'shop-api', '--latest', '--field', 'version'];

describe('--url with the API prefix', () => {
  it.each(['/v1', '/v1/', '/v1//'])('takes %s off and finds the version', async (suffix) => {
    const result = await run(['--url', `${server.url}${suffix}`, ...latest], { home: await freshHome() });
    expect(result).toEqual({ code: 0, stdout: '1.4.0\n', stderr: '' });
  });

  it('says so with --verbose', async () => {
    const result = await run(['--url', `${server.url}/v1/`, '--verbose', ...latest], { home: await freshHome() });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`verbose: --url ends with the API prefix /v1: using the server address ${server.url}\n`);
    expect(result.stderr).toContain(`> POST ${server.url}/v1/repositories/search`);
    expect(result.stderr).not.toContain('/v1/v1/');
  });

  it('the same for REPOADMIN_URL, and login stores the server without the prefix', async () => {
    const home = await freshHome();
    const env = { REPOADMIN_URL: `${server.url}/v1` };
    const login = await run(['login', '--username', 'admin', '--password-stdin', '--json'], { home, env, stdin: ADMIN_PASSWORD });
    expect(login.code).toBe(0);
    expect(JSON.parse(login.stdout)).toEqual({ url: server.url, username: 'admin' });
    const who = await run(['whoami', '--json'], { home });
    expect(JSON.parse(who.stdout).url).toBe(server.url);
  });
});

describe('an address that is not a registry is exit 5, never 3 ("nothing published")', () => {
  it.each([
    ['an HTML 404', 'text/html', '<html><body>Not Found</body></html>'],
    ['a JSON 404 of another service', 'application/json', '{"error":"Not Found","status":404}'],
  ])('%s', async (_name, type, body) => {
    const other = await notARegistry(type, body);
    try {
      const result = await run(['--url', other.url, ...latest], { home: await freshHome() });
      expect(result.code).toBe(5);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^error: .*404.*: is this a repoadmin server\? Check --url or REPOADMIN_URL/);
    } finally {
      await other.close();
    }
  });

  it.each([
    ['an HTML 500 of a proxy', 500, []],
    ['an HTML 401 of a sign-in proxy, with a token', 401, ['--token', 'some-token']],
  ])('%s', async (_name, status, flags) => {
    const other = await notARegistry('text/html', '<html><body>Sign in</body></html>', status as number);
    try {
      const result = await run(['--url', other.url, ...(flags as string[]), ...latest], { home: await freshHome() });
      expect(result.code, result.stderr).toBe(5);
      expect(result.stderr).toMatch(new RegExp(`^error: .*answered ${status} .*: is this a repoadmin server\\? Check --url or REPOADMIN_URL`));
    } finally {
      await other.close();
    }
  });

  it('but a gateway\'s HTML 503 says the server is unavailable', async () => {
    const other = await notARegistry('text/html', '<html>Service Unavailable</html>', 503);
    try {
      const result = await run(['--url', other.url, ...latest], { home: await freshHome(), env: { REPOADMIN_TIMEOUT: '5' } });
      expect(result.stderr).not.toContain('is this a repoadmin server');
      expect(result.stderr).toMatch(/503/);
    } finally {
      await other.close();
    }
  }, 20_000);

  it('a registry under a wrong path, whose 404 for an unknown route has our error body', async () => {
    const result = await run(['--url', `${server.url}/registry`, ...latest], { home: await freshHome() });
    expect(result.code).toBe(5);
    expect(result.stderr).toContain(`${server.url}/registry answered 404 (no such resource: POST /registry/v1/repositories/search): is this a repoadmin server?`);
  });

  it('a record or user that is not there is still exit 3', async () => {
    const home = await freshHome();
    const none = await run(['--url', server.url, 'search', '--group', 'com.example.none', '--artifact', 'x', '--latest'], { home });
    expect(none.code).toBe(3);
    const user = await run(['--url', server.url, '--token', admin, 'user', 'delete', 'nobody', '--yes'], { home });
    expect(user.code).toBe(3);
  });
});

describe('no server known', () => {
  it.each([
    [['whoami']],
    [['search', '--group', 'g']],
    [['publish', '--group', 'g', '--artifact', 'a', '--version', '1', '--branch', 'main', '--project', 'shop']],
    [['user', 'list']],
  ])('%j is exit 4 with how to log in', async (args) => {
    const result = await run(args, { home: await freshHome() });
    expect(result).toEqual({
      code: 4,
      stdout: '',
      stderr: 'error: not logged in: run repoadmin login --url URL (or give the server with --url or REPOADMIN_URL)\n',
    });
  });

  it('after logout too', async () => {
    const home = await freshHome();
    expect((await run(['login', '--url', server.url, '--username', 'admin', '--password-stdin'], { home, stdin: ADMIN_PASSWORD })).code).toBe(0);
    expect((await run(['logout'], { home })).code).toBe(0);
    const after = await run(['user', 'list'], { home });
    expect(after.code).toBe(4);
    expect(after.stderr).toMatch(/^error: not logged in: run repoadmin login --url URL/);
  });
});

describe('messages name the flags typed', () => {
  const env = () => ({ REPOADMIN_URL: server.url, REPOADMIN_TOKEN: admin });
  const publish = ['publish', '--group', 'com.example.msg', '--artifact', 'msg', '--branch', 'main', '--project', 'shop'];
  const stored = async () => server.db('versions').where({ group_id: 'com.example.msg' });

  it('--version: at most 100 characters, not artifact.version, and nothing is sent', async () => {
    const result = await run([...publish, '--version', '1'.repeat(101), '--verbose'], { home: await freshHome(), env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: --version: at most 100 characters\n');
    expect(result.stderr).not.toContain('artifact.version');
    expect(result.stderr).not.toContain('> POST');
    expect(await stored()).toHaveLength(0);
  });

  it('each flag of publish by its own name', async () => {
    const result = await run(
      ['publish', '--group', 'g'.repeat(101), '--artifact', 'a'.repeat(101), '--version', '1', '--branch', 'b'.repeat(256), '--project', 'p'.repeat(101), '--type', 't'.repeat(256)],
      { home: await freshHome(), env: env() },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: --project: at most 100 characters; --branch: at most 255 characters; --group: at most 100 characters; ' +
        '--artifact: at most 100 characters; --type: at most 255 characters\n',
    );
  });

  it('a field of a --file record by its place in that file; a branch from the build server by its variable', async () => {
    const home = await freshHome();
    const file = join(home, 'record.json');
    await writeFile(file, JSON.stringify({ projectName: 'shop', artifact: { groupId: 'com.example.msg', artifactId: 'msg', version: 'v'.repeat(101) } }));
    const result = await run(['publish', '--file', file], { home, env: { ...env(), BRANCH_NAME: 'b'.repeat(256) } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: BRANCH_NAME: at most 255 characters; artifact.version in ${file}: at most 100 characters\n`);
  });

  it('a description over 64 KiB is refused before sending, naming the limit and the flag', async () => {
    const home = await freshHome();
    const file = join(home, 'description.txt');
    await writeFile(file, 'x'.repeat(2_600_000));
    const result = await run([...publish, '--version', '1.0.0', '--description-file', file, '--verbose'], { home, env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error: --description-file ${file}: the description is 2600000 bytes; the server takes at most 65536 bytes (64 KiB). Shorten it, or link to the full text\n`,
    );
    expect(result.stderr).not.toContain('> POST');
    expect(await stored()).toHaveLength(0);

    const inline = await run([...publish, '--version', '1.0.0', '--description', 'é'.repeat(32 * 1024 + 1)], { home, env: env() });
    expect(inline.code).toBe(1);
    expect(inline.stderr).toMatch(/^error: --description: the description is 65538 bytes; the server takes at most 65536 bytes/);
  });

  it('a description of exactly 64 KiB is published', async () => {
    const result = await run([...publish, '--version', '1.0.1', '--description', 'd'.repeat(64 * 1024)], { home: await freshHome(), env: env() });
    expect(result.code).toBe(0);
    expect((await stored())[0].description).toHaveLength(64 * 1024);
  });

  it('search flags by their own names too', async () => {
    const result = await run(['--url', server.url, 'search', '--artifact', 'a'.repeat(513)], { home: await freshHome() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: --artifact: at most 512 characters\n');
    const sort = await run(['--url', server.url, 'search', '--sort', 'colour'], { home: await freshHome() });
    // A bad flag value the command line can judge itself: a usage error (exit 2), before any request.
    expect(sort.code).toBe(2);
    expect(sort.stderr).toMatch(/^error: --sort: the field must be one of projectName, .*repositoryUrl, latestVersion, not "colour"\n$/);
  });
});

describe('repoadmin server --help and its settings', () => {
  it('lists every setting with its variables and default, from the server\'s own definitions', async () => {
    const result = await run(['server', '--help'], { home: await freshHome() });
    expect(result.code).toBe(0);
    const settings = Object.values(SETTINGS);
    expect(settings.length).toBeGreaterThanOrEqual(19);
    for (const setting of settings) {
      const at = result.stdout.indexOf(`  --${setting.arg}, ${setting.env.join(' or ')}\n`);
      expect(at, setting.arg).toBeGreaterThan(0);
      const entry = result.stdout.slice(at).split('\n').slice(1).join(' ').replace(/\s+/g, ' ');
      expect(entry).toContain(`${setting.about}; default: ${setting.default}`);
    }
    expect(result.stdout).toContain('--port, REPO_MAN_PORT or PORT\n      port to listen on (0: any free one); default: 9090');
  });

  it.each([
    ['--prot', '--port'],
    ['--repoadmin_db_hots', '--repoadmin_db_host'],
    ['--REPOADMIN_LOG_LEVEL', '--repoadmin_log_level'],
  ])('%s gets "did you mean %s?" and exit 2, before anything starts', async (typo, meant) => {
    const home = await freshHome();
    const result = await run(['server', typo, '1'], { home });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: unknown setting ${typo} (did you mean ${meant}?); see repoadmin server --help\n`);
  });

  it('a setting nothing like a known one gets no guess', async () => {
    const result = await run(['server', '--colour', 'blue'], { home: await freshHome() });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('error: unknown setting --colour; see repoadmin server --help\n');
  });
});

describe('a mistyped subcommand of token', () => {
  it.each([
    ['lst', "error: unknown command 'token lst' (did you mean token list?)\n"],
    ['revok', "error: unknown command 'token revok' (did you mean token revoke?)\n"],
    ['zzzzzz', "error: unknown command 'token zzzzzz' (token takes create, list, revoke)\n"],
  ])('token %s gets a suggestion and exit 2, without printing a token', async (typo, message) => {
    const result = await run(['token', typo], { home: await freshHome() });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(message);
  });
});

describe('help at 80 columns', () => {
  const COMMANDS = [
    [], ['server'], ['login'], ['logout'], ['whoami'], ['token'],
    ['token', 'create'], ['token', 'list'], ['token', 'revoke'],
    ['user'], ['user', 'add'], ['user', 'passwd'], ['user', 'delete'], ['user', 'list'],
    ['publish'], ['search'],
    ['jobs'], ['jobs', 'validate'], ['jobs', 'render'], ['jobs', 'diff'], ['jobs', 'apply'],
  ];

  it.each(COMMANDS.map((c) => [c.join(' ') || '(top level)', c]))('%s --help fits in 80 columns and its paragraphs flow', async (_name, command) => {
    const result = await run([...(command as string[]), '--help'], { home: await freshHome() });
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.filter((line) => line.length > 80)).toEqual([]);
    // The description: the paragraphs between the usage line and the first list. A line that ends
    // well short of the width while its paragraph goes on is a hard break in the source text.
    const start = lines.findIndex((line) => line.startsWith('Usage:')) + 2;
    const end = lines.findIndex((line, i) => i >= start && /^[A-Z][A-Za-z ()]*:$/.test(line));
    const description = lines.slice(start, end === -1 ? undefined : end);
    const ragged = description.filter((line, i) => line !== '' && (description[i + 1] ?? '') !== '' && line.length < 60);
    expect(ragged).toEqual([]);
  });
});

describe('Retry-After', () => {
  it('given as an HTTP date further off than 10 s: fails at once, with when to try again', async () => {
    const body = JSON.stringify({ _status: false, _message: { category: 'ERROR', code: 'rate_limited', message: 'slow down' } });
    const later = new Date(Date.now() + 3600_000).toUTCString();
    const other = await notARegistry('application/json', body, 429, { 'retry-after': later });
    try {
      const result = await run(['--url', other.url, ...latest], { home: await freshHome() });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/^error: slow down \(try again in 3[56]\d\d s\)/);
      expect(other.requests()).toBe(1);
    } finally {
      await other.close();
    }
  });
});

describe('a server message with control characters', () => {
  it('is shown with them as U+FFFD, so it cannot drive the terminal', async () => {
    const body = JSON.stringify({ _status: false, _message: { category: 'ERROR', code: 'validation', message: 'bad\u001b[2J\u001b]0;title\u0007 value' } });
    const other = await notARegistry('application/json', body, 400);
    try {
      const result = await run(['--url', other.url, ...latest], { home: await freshHome() });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('error: bad\ufffd[2J\ufffd]0;title\ufffd value\n');
    } finally {
      await other.close();
    }
  });
});
