// The HA topology on this machine: three server processes (the built server) on PostgreSQL behind
// Debian's haproxy with deploy/haproxy.cfg, four publishers through the proxy, kill -9 of one
// instance midway. Every acknowledged publish is there afterwards, one latest per key, and clients
// that retry on a refused connection or a 503 see no other error.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, pgAvailable } from '../helpers/db.js';
import { databaseEnv, sleep, waitFor } from '../helpers/instances.js';
import { ROOT, type ServerProcess, cleanEnv, freePort, startServerProcess, tempDir } from '../helpers/process.js';
import { skipping } from '../helpers/skip.js';

const PUBLISHERS = 4;
const KEYS = 6;
const ADMIN_PASSWORD = 'ha-admin-password';

/** Debian's haproxy is in /usr/sbin, which a user's PATH may not hold. */
const HAPROXY = fs.existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy';

function haproxyInstalled(): boolean {
  try {
    execFileSync(HAPROXY, ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const haveHaproxy = haproxyInstalled();
if (!haveHaproxy && process.env.CI) throw new Error('haproxy is not installed (apt-get install haproxy; .ci/run does)');
skipping('the HA topology test', haveHaproxy ? (pgAvailable() ? undefined : 'no PostgreSQL (REPOADMIN_TEST_PG_URL)') : 'haproxy is not installed');

/** deploy/haproxy.cfg with this test's port and servers in place of the compose file's. */
function proxyConfig(port: number, servers: string[]): string {
  const config = fs.readFileSync(path.join(ROOT, 'deploy', 'haproxy.cfg'), 'utf8');
  const lines = servers.map((address, i) => `    server repoadmin${i + 1} ${address} check`).join('\n');
  return config
    .replace(/^ {4}bind :9090$/m, `    bind 127.0.0.1:${port}`)
    .replace(/^ {4}log stdout .*$/m, '')
    .replace(/(^ {4}server repoadmin\d .*\n?)+/m, `${lines}\n`);
}

interface Tally {
  served: number;
  retries: number;
  errors: string[];
  acknowledged: { uid: string; artifactId: string; version: string }[];
  lastRetryAt: number;
  /** The longest a publish took, from its first attempt to its answer, and when it started. */
  slowest: { ms: number; startedAt: number };
}

/** One publish, tried again on a refused connection (or a connection dropped by the proxy) and on a 503. */
async function publish(url: string, token: string, body: unknown, tally: Tally): Promise<{ uid: string } | undefined> {
  const startedAt = Date.now();
  try {
    return await publishOnce(url, token, body, tally);
  } finally {
    const ms = Date.now() - startedAt;
    if (ms > tally.slowest.ms) tally.slowest = { ms, startedAt };
  }
}

async function publishOnce(url: string, token: string, body: unknown, tally: Tally): Promise<{ uid: string } | undefined> {
  for (let attempt = 0; attempt < 50; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${url}/v1/repositories`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (code !== 'ECONNREFUSED') tally.errors.push(`fetch failed: ${code ?? (error as Error).message}`);
      tally.retries++;
      tally.lastRetryAt = Date.now();
      await sleep(100);
      continue;
    }
    const text = await res.text();
    if (res.status === 503) {
      tally.retries++;
      tally.lastRetryAt = Date.now();
      await sleep(100);
      continue;
    }
    tally.served++;
    if (res.status !== 200 && res.status !== 201) {
      tally.errors.push(`${res.status}: ${text.slice(0, 200)}`);
      return undefined;
    }
    return JSON.parse(text) as { uid: string };
  }
  tally.errors.push('gave up after 50 attempts');
  return undefined;
}

describe.skipIf(!haveHaproxy || !pgAvailable())('three instances behind HAProxy on PostgreSQL', () => {
  it('keep every acknowledged publish when one is killed midway', { timeout: 240_000 }, async () => {
    const database = await createTestDatabase('postgres');
    const env = cleanEnv({ ...databaseEnv(database.settings), REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn', REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD, REPO_MAN_TRUST_PROXY: 'true' });
    const servers: ServerProcess[] = [];
    let proxy: ChildProcess | undefined;
    try {
      servers.push(...(await Promise.all([0, 1, 2].map(() => startServerProcess([], env, 60_000)))));
      const dir = tempDir();
      const cfg = path.join(dir, 'haproxy.cfg');
      const proxyPort = await freePort();
      fs.writeFileSync(cfg, proxyConfig(proxyPort, servers.map((s) => new URL(s.url).host)));
      proxy = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
      let proxyLog = '';
      proxy.stderr!.on('data', (chunk: Buffer) => (proxyLog += chunk.toString()));
      const url = `http://127.0.0.1:${proxyPort}`;
      await waitFor('the proxy', async () => (await fetch(`${url}/health/ready`).then((r) => r.status, () => 0)) === 200, 20_000).catch((error: Error) => {
        throw new Error(`${error.message}\n${proxyLog}`);
      });
      const login = await fetch(`${url}/v1/authentication/generate-token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
      });
      expect(login.status).toBe(200);
      const { token } = (await login.json()) as { token: string };

      const tally: Tally = { served: 0, retries: 0, errors: [], acknowledged: [], lastRetryAt: 0, slowest: { ms: 0, startedAt: 0 } };
      let killedAt = 0;
      const TOTAL = 1_200;
      const publisher = async (p: number) => {
        for (let i = 0; tally.acknowledged.length < TOTAL && tally.errors.length === 0; i++) {
          const artifactId = `lib-${(p + i) % KEYS}`;
          const version = `${p}.${i}`;
          const body = { projectName: 'ha', branch: 'main', artifact: { groupId: 'ha', artifactId, version }, latestVersion: true };
          const answer = await publish(url, token, body, tally);
          if (answer) tally.acknowledged.push({ uid: answer.uid, artifactId, version });
        }
      };
      const load = Promise.all(Array.from({ length: PUBLISHERS }, (_, p) => publisher(p)));
      await waitFor('the load under way', () => tally.acknowledged.length >= TOTAL / 3 || tally.errors.length > 0, 120_000, 10);
      killedAt = Date.now();
      servers[1]!.child.kill('SIGKILL');
      const beforeKill = tally.acknowledged.length;
      const slowestBefore = tally.slowest.ms;
      tally.slowest = { ms: 0, startedAt: 0 };
      await load;
      const loadMs = Date.now() - killedAt;

      expect(tally.errors).toEqual([]);
      expect(tally.acknowledged.length).toBeGreaterThanOrEqual(TOTAL);
      expect(tally.acknowledged.length - beforeKill).toBeGreaterThan(TOTAL / 3);
      // Every acknowledged publish is there, through the two instances left.
      const missing: string[] = [];
      for (let i = 0; i < tally.acknowledged.length; i += 50) {
        await Promise.all(
          tally.acknowledged.slice(i, i + 50).map(async (a) => {
            const res = await fetch(`${url}/v1/repositories/${a.uid}`, { headers: { Authorization: `Bearer ${token}` } });
            const body = (await res.json()) as { version?: string };
            if (res.status !== 200 || body.version !== a.version) missing.push(`${a.version} (${res.status})`);
          }),
        );
      }
      expect(missing).toEqual([]);
      for (let k = 0; k < KEYS; k++) {
        const res = await fetch(`${url}/v1/repositories/search`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
          body: JSON.stringify({ groupId: 'ha', artifactId: `lib-${k}`, latestVersion: true }),
        });
        const body = (await res.json()) as { page: { totalElements: number } };
        expect({ key: k, latest: body.page.totalElements }).toEqual({ key: k, latest: 1 });
      }
      const recoveredMs = tally.lastRetryAt > killedAt ? tally.lastRetryAt - killedAt : 0;
      console.log(
        `HA figures: ${tally.served} publishes served (${tally.acknowledged.length} acknowledged, ${beforeKill} before the kill), ` +
          `${tally.retries} retries seen by the clients (the last ${recoveredMs} ms after the kill), ` +
          `slowest publish before the kill ${slowestBefore} ms, after it ${tally.slowest.ms} ms (started ${tally.slowest.startedAt - killedAt} ms after the kill), ` +
          `${tally.acknowledged.length - beforeKill} publishes in the ${loadMs} ms after the kill`,
      );
    } finally {
      proxy?.kill('SIGKILL');
      await Promise.all(servers.map((s) => s.stop('SIGKILL')));
      await database.drop();
    }
  });
});
