// The self-runnable archive: npm pack, an offline install into a temporary prefix away from the
// source tree, the installed server on its embedded database driven by the installed CLI, and a
// graceful stop on SIGTERM while a request is in flight.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import nodeModule from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, assertBuilt } from '../cli/run.js';
import { createTestDatabase, mysqlAvailable } from '../helpers/db.js';
import { ROOT } from './api-files.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };

const ADMIN_PASSWORD = 'archive-admin-pass-1';
const tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'repoadmin-archive-')));
const prefix = path.join(tmp, 'prefix');
const installed = path.join(prefix, 'lib', 'node_modules', 'repoadmin');
const binary = path.join(prefix, 'bin', 'repoadmin');
const dataDir = path.join(tmp, 'data');

/** An environment with nothing from the source tree or from `npm test`: no npm_* settings, no NODE_PATH. */
const cleanEnv: NodeJS.ProcessEnv = {
  PATH: `${path.join(prefix, 'bin')}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
  HOME: path.join(tmp, 'home'),
  LANG: 'C.UTF-8',
};

let tarball: string;
let tarEntries: string[];
let server: ChildProcess | undefined;
let serverOut = '';
let serverErr = '';
let url: string;

/** Runs the installed `repoadmin` from the temporary folder. */
function cli(args: string[], input?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      cwd: tmp,
      env: { ...cleanEnv, REPOADMIN_CONFIG_DIR: path.join(tmp, 'config'), CI: '1', NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A command that needs no input may end before reading it (EPIPE): nothing to report.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(input ?? '');
  });
}

/**
 * Whether the server has read everything a client's connection sent it: its end of the connection
 * holds nothing unread (ss, Recv-Q 0). Then it has accepted the connection and parsed the headers.
 */
async function serverHasRead(serverPort: number, clientPort: number): Promise<boolean> {
  const { stdout } = await promisify(execFile)('ss', ['-Htn', 'state', 'established', `( sport = :${serverPort} and dport = :${clientPort} )`]);
  const line = stdout.trim();
  return line !== '' && line.split(/\s+/)[0] === '0';
}

function waitFor(check: () => RegExpExecArray | null, what: string, ms: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      const found = check();
      if (found) {
        clearInterval(poll);
        resolve(found);
      } else if (Date.now() - started > ms) {
        clearInterval(poll);
        reject(new Error(`timed out waiting for ${what}; server stderr:\n${serverErr}`));
      }
    }, 50);
  });
}

beforeAll(async () => {
  assertBuilt();
  // --ignore-scripts: prepack would rebuild dist/ under the feet of the other test files.
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  tarball = path.join(tmp, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  tarEntries = (await run('tar', ['tzf', tarball], { maxBuffer: 64 * 1024 * 1024 })).stdout.split('\n').filter(Boolean);

  // --offline, a cache of its own and a registry that does not exist: everything must come from the archive.
  await run(
    'npm',
    ['install', '--global', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, '--cache', path.join(tmp, 'npm-cache'), '--registry', 'http://127.0.0.1:9/', tarball],
    { cwd: tmp, env: cleanEnv, maxBuffer: 16 * 1024 * 1024 },
  );
  // Packing and installing take about 40 s of a quiet machine's time (10 s and 27 s here), and three
  // to four times that beside the other test files on two busy cores: 120 s was once too little.
}, 300_000);

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGKILL');
    await new Promise((resolve) => server!.once('exit', resolve));
  }
  // An install that outlived its hook may still be writing for a moment.
  rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe('the archive', () => {
  it(`is repoadmin-${pkg.version}.tgz with the launcher, the bundle, the built page and the run-time modules only`, () => {
    expect(path.basename(tarball)).toBe(`repoadmin-${pkg.version}.tgz`);
    // The Node 20 code cache is made by a build on Node 20; a later Node caches the bundle itself.
    const codeCache = 'enableCompileCache' in nodeModule ? [] : ['dist/repoadmin.cjs.cache'];
    for (const file of ['bin/repoadmin', 'bin/package.json', 'dist/repoadmin.cjs', ...codeCache, 'dist/public/index.html', 'dist/public/api/openapi.yaml', 'dist/public/api/repoadmin.postman_collection.json', 'package.json']) {
      expect(tarEntries).toContain(`package/${file}`);
    }
    const modules = new Set(tarEntries.filter((e) => e.startsWith('package/node_modules/')).map((e) => e.split('/').slice(2, e.split('/')[2]!.startsWith('@') ? 4 : 3).join('/')));
    for (const runtime of ['@electric-sql/pglite', 'bcrypt', 'knex', 'koa', 'pg', 'pino', 'prom-client']) expect(modules).toContain(runtime);
    for (const devOnly of ['vitest', 'typescript', 'esbuild', 'playwright-core', 'tsx', 'newman', '@types/node', 'marked', 'commander']) {
      expect(modules).not.toContain(devOnly);
    }
    const own = tarEntries.filter((e) => !e.startsWith('package/node_modules/'));
    expect(own.filter((e) => /\.(ts|map)$/.test(e) || /^package\/(test|server|cli|common|scripts|bench)\//.test(e))).toEqual([]);
  });

  it('installs offline into a prefix of its own, not linked to the source tree', () => {
    expect(existsSync(binary)).toBe(true);
    expect(realpathSync(installed).startsWith(prefix)).toBe(true);
    expect(realpathSync(binary).startsWith(installed)).toBe(true);
    expect(existsSync(path.join(installed, 'node_modules', 'bcrypt'))).toBe(true);
  });

  it('runs every command of the installed CLI', async () => {
    const version = await cli(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    const commands = ['server', 'login', 'logout', 'whoami', 'token', 'user', 'publish', 'search', 'jobs'];
    const helps = await Promise.all(commands.map((command) => cli([command, '--help'])));
    commands.forEach((command, i) => {
      expect(helps[i]!.code, `${command} --help: ${helps[i]!.stderr}`).toBe(0);
      expect(helps[i]!.stdout).toContain(`repoadmin ${command}`);
    });
  }, 60_000);

  it('starts repoadmin server on the embedded database', async () => {
    server = spawn(binary, ['server', '--port', '0'], {
      cwd: tmp,
      env: { ...cleanEnv, REPO_MAN_DATA_DIR: dataDir, REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD, REPO_MAN_BCRYPT_COST: '4' },
    });
    server.stdout!.on('data', (d) => (serverOut += d));
    server.stderr!.on('data', (d) => (serverErr += d));
    const listening = await waitFor(() => /listening on http:\/\/localhost:(\d+), database: embedded PGlite at (.+)/.exec(serverErr), 'the server to listen', 150_000);
    expect(listening[2]).toBe(dataDir);
    url = `http://127.0.0.1:${listening[1]}`;

    const ready = await fetch(`${url}/health/ready`);
    expect(ready.status).toBe(200);
    const page = await fetch(`${url}/public/index.html`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);
    const description = await fetch(`${url}/public/api/openapi.yaml`);
    expect(await description.text()).toBe(readFileSync(path.join(ROOT, 'public', 'api', 'openapi.yaml'), 'utf8'));

    // Every module the server process mapped (the native bcrypt addon among them) comes from the archive.
    const mapped = readFileSync(`/proc/${server.pid}/maps`, 'utf8').split('\n').map((l) => l.split(/\s+/)[5] ?? '').filter((f) => f.includes('node_modules'));
    expect(mapped.some((f) => f.includes('bcrypt'))).toBe(true);
    expect(mapped.filter((f) => !f.startsWith(installed))).toEqual([]);
  }, 180_000);

  it('is driven by the installed CLI: login, publish, search', async () => {
    const login = await cli(['login', '--url', url, '--username', 'admin', '--password-stdin'], `${ADMIN_PASSWORD}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain('Logged in');

    const publish = await cli(['publish', '--project', 'acme', '--group', 'com.acme', '--artifact', 'app', '--version', '1.2.3', '--branch', 'main', '--latest']);
    expect(publish.code, publish.stderr).toBe(0);
    expect(publish.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);

    const search = await cli(['search', '--group', 'com.acme', '--artifact', 'app', '--branch', 'main', '--latest', '--field', 'version']);
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout).toBe('1.2.3\n');

    const json = await cli(['search', '--group', 'com.acme', '--json']);
    expect(JSON.parse(json.stdout).versionInformation).toEqual([expect.objectContaining({ uid: publish.stdout.trim(), projectName: 'acme', latestVersion: true })]);
  }, 60_000);

  it('logs JSON lines off a terminal, without the password or token', async () => {
    const lines = serverOut.split('\n').filter(Boolean);
    const requests = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.msg === 'request');
    expect(requests.map((e) => `${e.method} ${e.path} ${e.status}`)).toContain('POST /v1/authentication/generate-token 200');
    expect(requests.every((e) => typeof e.requestId === 'string' && typeof e.durationMs === 'number')).toBe(true);
    const stored = JSON.parse(readFileSync(path.join(tmp, 'config', 'config.json'), 'utf8')) as unknown;
    const token = /eyJ[\w-]+\.[\w-]+\.[\w-]+/.exec(JSON.stringify(stored))?.[0];
    expect(token).toBeDefined();
    expect(serverOut + serverErr).not.toContain(token!);
    expect(serverOut + serverErr).not.toContain(ADMIN_PASSWORD);
  });

  it('on SIGTERM finishes the request in flight, accepts no new ones, closes the database and exits 0 within 10 s', async () => {
    const body = JSON.stringify({ groupId: 'com.acme', artifactId: 'app' });
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (d) => (answer += d));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // Headers and half the body; once the server has read them, it is reading the request.
    socket.write(
      `POST /v1/repositories/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await expect.poll(() => serverHasRead(Number(new URL(url).port), socket.localPort!), { timeout: 10_000, interval: 20 }).toBe(true);

    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
      server!.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
    const signalled = Date.now();
    server!.kill('SIGTERM');
    await waitFor(() => /SIGTERM: stopping/.exec(serverErr), 'the stop message', 5_000);
    await expect(fetch(`${url}/health`)).rejects.toThrow();

    socket.write(body.slice(10));
    const { code, signal, at } = await exited;
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).page.totalElements).toBe(1);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(at - signalled).toBeLessThan(10_000);
    expect(serverErr).toContain('stopped');
    // The lock file stays (another server may have it open), emptied of its holder: the lock is let go.
    expect(readFileSync(path.join(dataDir, 'repoadmin.lock'), 'utf8')).toBe('');
  }, 30_000);

  it('leaves mysql2 out: a MariaDB start without it says in one line how to install it', async () => {
    expect(existsSync(path.join(installed, 'node_modules', 'mysql2'))).toBe(false);
    const result = await cli(['server', '--port', '0', '--repoadmin_db_jdbc', 'mariadb']);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toEqual([
      'error: the database driver "mysql2" is not installed (--repoadmin_db_driver / REPO_MAN_DB_DRIVER): run "npm install mysql2" in a folder and give that folder as --repoadmin_db_driver_path / REPO_MAN_DB_DRIVER_PATH',
    ]);
  });

  it.runIf(mysqlAvailable())('runs on MariaDB with mysql2 from the driver folder, or from the working directory', async () => {
    // The folder as `npm install mysql2` leaves it, its package linked from this checkout's modules.
    const drivers = path.join(tmp, 'drivers');
    mkdirSync(path.join(drivers, 'node_modules'), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules', 'mysql2'), path.join(drivers, 'node_modules', 'mysql2'));
    const database = await createTestDatabase('mysql');
    const env = {
      ...cleanEnv,
      REPO_MAN_DB_JDBC: 'mariadb',
      REPO_MAN_DB_HOST: database.settings.host,
      REPO_MAN_DB_PORT: String(database.settings.port),
      REPO_MAN_DB_USER: database.settings.user,
      REPO_MAN_DB_PASS: database.settings.password,
      REPO_MAN_DB_DATABASE: database.settings.database,
      REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
      REPO_MAN_BCRYPT_COST: '4',
    };
    /** Starts the installed server, logs in, stops it; returns its "database:" line. */
    async function startAndLogIn(args: string[], cwd: string): Promise<string> {
      const child = spawn(binary, ['server', '--port', '0', ...args], { cwd, env });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.stdout.resume();
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      try {
        const started = Date.now();
        while (!/listening on http:\/\/localhost:\d+/.test(stderr) && child.exitCode === null && Date.now() - started < 45_000) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const listening = /listening on http:\/\/localhost:(\d+), database: (.*)/.exec(stderr);
        expect(listening, stderr).not.toBeNull();
        const login = await fetch(`http://127.0.0.1:${listening![1]}/v1/authentication/generate-token`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
        });
        expect(login.status).toBe(200);
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
        return listening![2]!;
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    }
    try {
      const described = new RegExp(`^(MariaDB|MySQL) [\\d.]+ database ${database.settings.database} on `);
      expect(await startAndLogIn(['--repoadmin_db_driver_path', drivers, '--repoadmin_db_driver', 'mysql2'], tmp)).toMatch(described);
      expect(await startAndLogIn([], drivers)).toMatch(described);
    } finally {
      await database.drop();
    }
  }, 90_000);
});
