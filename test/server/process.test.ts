// The server as a process (the built bin/repoadmin): start-up, locks, bad settings, restarts.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, pgAvailable } from '../helpers/db.js';
import { skipping } from '../helpers/skip.js';
import { BIN, ROOT, type ServerProcess, cleanEnv, run, embeddedDataDir, startServerProcess, tempDir } from '../helpers/process.js';

const FAST = { REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn' };
/** Tests that start embedded-database servers: each start takes 10 to 15 s on a busy two-core machine. */
const SERVER_TEST_MS = 90_000;

async function login(url: string, password: string): Promise<string> {
  const res = await fetch(`${url}/v1/authentication/generate-token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

describe('the server process', () => {
  const running: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop('SIGKILL')));
  });

  it('says where it listens and which database it uses, and how to change the first password', async () => {
    const dir = embeddedDataDir();
    const server = await startServerProcess([], cleanEnv({ ...FAST, REPO_MAN_DATA_DIR: dir }));
    running.push(server);
    expect(server.stderr()).toContain(`database: embedded PGlite at ${dir}`);
    expect(server.stderr()).toContain('"admin" with the password "password"');
    expect(server.stderr()).toContain('repoadmin user passwd');
    expect(await server.stop()).toBe(0);
  }, SERVER_TEST_MS);

  it('refuses a second server on the same embedded folder while the first keeps working', async () => {
    const dir = embeddedDataDir();
    const env = cleanEnv({ ...FAST, REPO_MAN_DATA_DIR: dir, REPO_MAN_ADMIN_PASSWORD: 'first-admin-pw' });
    const first = await startServerProcess([], env);
    running.push(first);
    const second = await run(['server', '--port', '0'], env);
    expect(second.code).not.toBe(0);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect(second.stderr).toMatch(/^error: the embedded database at .* is in use by another server \(pid \d+\)/);
    expect(await login(first.url, 'first-admin-pw')).toBeTruthy();
    expect(await first.stop()).toBe(0);
  }, SERVER_TEST_MS);

  it('stops on SIGTERM while still starting, and leaves no child behind', async () => {
    const dir = tempDir();
    // A first start at the highest cost: creating the database, then a hash of about 16 s.
    const env = cleanEnv({ REPO_MAN_LOG_LEVEL: 'warn', REPO_MAN_BCRYPT_COST: '18', REPO_MAN_DATA_DIR: dir, REPO_MAN_ADMIN_PASSWORD: 'slow-admin-pw' });
    const child = spawn(process.execPath, [BIN, 'server', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Still starting, with the child that creates the embedded database running (its arguments name the folder).
    const childOfDir = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).includes(dir);
    await expect.poll(childOfDir, { timeout: 60_000, interval: 20 }).toBe(true);
    expect(stderr).not.toContain('listening on');
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
    if (code === 'still running') child.kill('SIGKILL');
    expect(code, stderr).toBe(143);
    expect(stderr).toContain('SIGTERM while starting: stopping before the server was ready');
    // The database-creating child went with it.
    await expect.poll(childOfDir, { timeout: 5_000 }).toBe(false);
  }, SERVER_TEST_MS);

  it('starts again after a SIGKILL, and tokens survive the restart (the secret is stored)', async () => {
    const dir = embeddedDataDir();
    const env = cleanEnv({ ...FAST, REPO_MAN_DATA_DIR: dir, REPO_MAN_ADMIN_PASSWORD: 'restart-admin-pw' });
    const first = await startServerProcess([], env);
    const token = await login(first.url, 'restart-admin-pw');
    await first.stop('SIGKILL');
    const second = await startServerProcess([], env);
    running.push(second);
    const me = await fetch(`${second.url}/v1/users/me`, { headers: { Authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(await second.stop()).toBe(0);
  }, SERVER_TEST_MS);

  it.each([
    [['--repoadmin_db_jdbc', 'oracle'], {}, /unsupported database kind "oracle" \(--repoadmin_db_jdbc \/ REPO_MAN_DB_JDBC\)/],
    [[], { REPO_MAN_DB_JDBC: 'sqlite' }, /unsupported database kind "sqlite"/],
    [['--repoadmin_jwt_secret', 'too-short'], {}, /--repoadmin_jwt_secret must be at least 32 bytes/],
    [[], { REPO_MAN_JWT_SECRET: 'short' }, /REPO_MAN_JWT_SECRET must be at least 32 bytes/],
    [['--repoadmin_db_jdbc', 'postgres', '--repoadmin_db_host', '127.0.0.1', '--repoadmin_db_port', '1'], {}, /cannot connect to PostgreSQL at 127\.0\.0\.1:1 .*connection refused; check --repoadmin_db_host, --repoadmin_db_port/],
    [['--repoadmin_db_jdbc', 'postgres', '--repoadmin_db_driver', 'no-such-driver'], {}, /the database driver "no-such-driver" is not installed \(--repoadmin_db_driver/],
    [['--repoadmin_db_jdbc', 'mariadb', '--repoadmin_db_host', '127.0.0.1', '--repoadmin_db_port', '1'], {}, /cannot connect to MariaDB\/MySQL at 127\.0\.0\.1:1 .*connection refused; check --repoadmin_db_host, --repoadmin_db_port/],
    [['--port', 'eighty'], {}, /--port must be a whole number/],
    [['--colour', 'blue'], {}, /unknown setting --colour/],
    [[], { REPO_MAN_ADMIN_PASSWORD: 'short' }, /REPO_MAN_ADMIN_PASSWORD breaks the password rules: at least 8 bytes/],
  ])('stops with one clear line for %j %j', async (args, env, message) => {
    const result = await run(['server', '--port', '0', ...args], cleanEnv({ ...FAST, REPO_MAN_DATA_DIR: tempDir(), ...env }));
    expect(result.code).not.toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: /);
    expect(lines[0]).toMatch(message);
  });

  it.skipIf(skipping('the server process on PostgreSQL', pgAvailable() ? undefined : 'REPOADMIN_TEST_PG_URL is not set'))('runs on PostgreSQL from the REPO_MAN_DB_* settings, the argument winning over the variable, the driver from the driver folder', async () => {
    const url = new URL(PG_URL!);
    // A driver folder whose `pg` is looked up before the bundled one; it leaves a mark when loaded.
    const driverDir = tempDir();
    const marker = path.join(driverDir, 'loaded');
    fs.mkdirSync(path.join(driverDir, 'node_modules', 'pg'), { recursive: true });
    fs.writeFileSync(
      path.join(driverDir, 'node_modules', 'pg', 'index.js'),
      `require('fs').writeFileSync(${JSON.stringify(marker)}, 'yes'); module.exports = require(${JSON.stringify(path.join(ROOT, 'node_modules', 'pg'))});`,
    );
    const env = cleanEnv({
      ...FAST,
      REPO_MAN_DB_JDBC: 'postgresql',
      REPO_MAN_DB_HOST: url.hostname,
      REPO_MAN_DB_PORT: '1',
      REPO_MAN_DB_USER: decodeURIComponent(url.username || 'postgres'),
      REPO_MAN_DB_PASS: decodeURIComponent(url.password || ''),
      REPO_MAN_DB_DATABASE: url.pathname.slice(1) || 'postgres',
      REPO_MAN_DB_DRIVER: 'org.postgresql.Driver',
      REPO_MAN_DB_DRIVER_PATH: driverDir,
      REPO_MAN_ADMIN_PASSWORD: 'pg-admin-password',
      REPO_MAN_JWT_SECRET: 'x'.repeat(32),
    });
    // Use a fresh database so the first start happens here.
    const { createTestDatabase } = await import('../helpers/db.js');
    const database = await createTestDatabase('postgres');
    try {
      const server = await startServerProcess(['--repoadmin_db_port', url.port || '5432', '--repoadmin_db_database', database.settings.database], env);
      running.push(server);
      expect(server.stderr()).toContain(`PostgreSQL database ${database.settings.database} on ${url.hostname}:${url.port || 5432}`);
      expect(await login(server.url, 'pg-admin-password')).toBeTruthy();
      expect(fs.readFileSync(marker, 'utf8')).toBe('yes');
      expect(await server.stop()).toBe(0);
    } finally {
      await database.drop();
    }
  });
});
