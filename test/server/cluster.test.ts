// --workers: the primary replaces every worker that ends, whenever it ends, gives up only with a
// non-zero exit, stops with exit 0 on SIGTERM; /metrics is the sum over the workers.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, pgAvailable } from '../helpers/db.js';
import { childrenOf, databaseEnv, sleep, waitFor } from '../helpers/instances.js';
import { cleanEnv, freePort, startServerProcess } from '../helpers/process.js';

const ENV = { REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn', REPO_MAN_ADMIN_PASSWORD: 'cluster-admin-pw' };

async function serving(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health/ready`)).status === 200;
  } catch {
    return false;
  }
}

/** The sum of a counter's samples in a Prometheus text. */
function total(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe.skipIf(!pgAvailable())('--workers on PostgreSQL', () => {
  it('replaces workers killed together and a replacement killed before it listens; SIGTERM stops it with exit 0', async () => {
    const database = await createTestDatabase('postgres');
    // A port given, not 0: with port 0, the port of workers that all died changes with their replacements.
    const server = await startServerProcess(['--port', String(await freePort()), '--workers', '3'], cleanEnv({ ...ENV, ...databaseEnv(database.settings) }), 60_000);
    try {
      const primary = server.child.pid!;
      await waitFor('three workers', () => childrenOf(primary).length === 3, 30_000);
      const first = childrenOf(primary);
      for (const pid of first) process.kill(pid, 'SIGKILL');
      // The first replacement is killed as soon as it exists, long before it can listen.
      const replacement = await waitFor('a replacement', () => childrenOf(primary).some((pid) => !first.includes(pid)), 10_000, 20);
      expect(replacement).toBeLessThan(10_000);
      const early = childrenOf(primary).filter((pid) => !first.includes(pid));
      for (const pid of early) process.kill(pid, 'SIGKILL');
      const recovered = await waitFor('serving again', () => serving(server.url), 35_000, 200).catch((error: Error) => {
        throw new Error(`${error.message}\n${server.stderr()}`);
      });
      expect(recovered).toBeLessThan(35_000);
      await waitFor('three workers again', () => childrenOf(primary).length === 3, 35_000);
      expect(server.stderr()).toMatch(/ended \(SIGKILL\); starting another in \d+ s/);
      expect(await server.stop('SIGTERM')).toBe(0);
    } finally {
      await server.stop('SIGKILL');
      await database.drop();
    }
  });

  it('/metrics is the sum over the workers: after K requests every scrape shows at least K and never less', async () => {
    const database = await createTestDatabase('postgres');
    const server = await startServerProcess(['--workers', '2'], cleanEnv({ ...ENV, ...databaseEnv(database.settings) }), 60_000);
    try {
      await waitFor('two workers', () => childrenOf(server.child.pid!).length === 2, 30_000);
      const K = 200;
      for (let i = 0; i < K; i += 20) {
        // New connections, so that both workers answer some of them.
        const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/health`, { headers: { connection: 'close' } })));
        expect(answers.map((res) => res.status)).toEqual(Array(20).fill(200));
      }
      let previous = 0;
      const seen: number[] = [];
      for (let scrape = 0; scrape < 10; scrape++) {
        const res = await fetch(`${server.url}/metrics`, { headers: { connection: 'close' } });
        expect(res.status).toBe(200);
        const text = await res.text();
        const value = total(text, 'http_requests_total');
        seen.push(value);
        expect(value).toBeGreaterThanOrEqual(Math.max(K, previous));
        previous = value;
        // Gauges are per worker: one pool size line for each.
        expect(text.match(/^repoadmin_db_pool_max\{worker="\d+"\}/gm)).toHaveLength(2);
      }
      expect(seen[seen.length - 1]).toBeGreaterThanOrEqual(K);
    } finally {
      await server.stop('SIGKILL');
      await database.drop();
    }
  });

  it('gives up with a non-zero exit when no worker can ever serve', async () => {
    const database = await createTestDatabase('postgres');
    // The port is taken, so every worker fails to listen; the primary prepares the database first.
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '0.0.0.0', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const { spawn } = await import('node:child_process');
      const { BIN } = await import('../helpers/process.js');
      const child = spawn(process.execPath, [BIN, 'server', '--port', String(port), '--workers', '2'], {
        env: cleanEnv({ ...ENV, ...databaseEnv(database.settings) }),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      expect(stderr).toMatch(/workers in a row ended before they could serve/);
    } finally {
      blocker.close();
      await sleep(10);
      await database.drop();
    }
  });
});
