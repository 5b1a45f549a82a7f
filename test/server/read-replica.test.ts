// Reads from a real streaming replica (test/helpers/streaming.ts) through the built server: which
// endpoints read there, the fallback to the primary when the replica is behind or gone, the wait
// for a client's position (read-your-writes), and a pool that drops connections to a server that
// became a replica (docs/operations.md, "Read replicas" and "Failover").
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/instances.js';
import { type ServerProcess, cleanEnv, startServerProcess } from '../helpers/process.js';
import { type StreamingPair, replicaSkip, startStreamingPair } from '../helpers/streaming.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const skip = replicaSkip('the read replica tests');
const ADMIN_PASSWORD = 'replica-admin-password';
const POSITION = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers of several shapes, read field by field
  body: any;
  ms: number;
}

async function call(url: string, method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, ms: Date.now() - started };
}

async function metric(url: string, name: string, labels: string): Promise<number | undefined> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text());
  const line = text.split('\n').find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const reads = (url: string, target: string) => metric(url, 'repoadmin_db_reads_total', `target="${target}"`).then((n) => n ?? 0);

/** Waits until the server reads from the replica: its last check found it within the allowed lag. */
const replicaInUse = (url: string, maxLagS: number) =>
  waitFor('the replica in use', async () => {
    const lag = await metric(url, 'repoadmin_db_replica_lag_seconds', '');
    return lag !== undefined && lag <= maxLagS;
  }, 20_000, 100);

const record = (version: string) => ({ projectName: 'rr', branch: 'main', artifact: { groupId: 'rr', artifactId: 'lib', version }, latestVersion: true });

async function login(url: string): Promise<string> {
  const res = await call(url, 'POST', '/v1/authentication/generate-token', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  expect(res.status).toBe(200);
  return res.body.token as string;
}

describe.skipIf(skip)('a server with a read replica', () => {
  let pair: StreamingPair;
  let server: ServerProcess;
  let token: string;
  // Above what the position test's pause lasts on a loaded machine, so that only the position decides there.
  const MAX_LAG_MS = 2_000;

  beforeAll(async () => {
    pair = await startStreamingPair();
    const env = cleanEnv({ ...pair.serverEnv({ maxLagMs: MAX_LAG_MS }), REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn', REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD });
    server = await startServerProcess([], env, 60_000);
    token = await login(server.url);
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await pair?.stop();
  });

  it('answers a write with its position and reads lookups, searches and records from the replica', async () => {
    const published = await call(server.url, 'POST', '/v1/repositories', { token, body: record('1.0.0') });
    expect(published.status).toBe(201);
    expect(published.headers.get('x-repoadmin-position')).toMatch(POSITION);
    await replicaInUse(server.url, MAX_LAG_MS / 1000);

    const before = { replica: await reads(server.url, 'replica'), fallback: await reads(server.url, 'fallback') };
    const position = { 'X-Repoadmin-Position': published.headers.get('x-repoadmin-position')! };
    const latest = await call(server.url, 'GET', '/v1/repositories/latest?projectName=rr&groupId=rr&artifactId=lib&branch=main', { token, headers: position });
    expect(latest.status).toBe(200);
    expect(latest.body.version).toBe('1.0.0');
    expect((await call(server.url, 'POST', '/v1/repositories/search', { token, body: { groupId: 'rr' }, headers: position })).body.page.totalElements).toBe(1);
    expect((await call(server.url, 'GET', `/v1/repositories/${published.body.uid}`, { token, headers: position })).status).toBe(200);
    expect(await reads(server.url, 'replica')).toBe(before.replica + 3);
    expect(await reads(server.url, 'fallback')).toBe(before.fallback);

    // A position that is not one is refused, not ignored.
    const bad = await call(server.url, 'GET', '/v1/repositories/latest?projectName=rr&groupId=rr&artifactId=lib&branch=main', { headers: { 'X-Repoadmin-Position': 'yesterday' } });
    expect(bad.status).toBe(400);
    expect(bad.body._message.message).toContain('X-Repoadmin-Position');
  });

  it('waits for the replica to replay a position, and reads from the primary when it has not within 500 ms', async () => {
    await replicaInUse(server.url, MAX_LAG_MS / 1000);
    await pair.onReplica('select pg_wal_replay_pause()');
    const published = await call(server.url, 'POST', '/v1/repositories', { token, body: record('2.0.0') });
    expect(published.status).toBe(201);
    const position = { 'X-Repoadmin-Position': published.headers.get('x-repoadmin-position')! };
    const path = '/v1/repositories/latest?projectName=rr&groupId=rr&artifactId=lib&branch=main';

    // Without the position the replica answers what it has: the record before (so reads do go there).
    const stale = await call(server.url, 'GET', path, { token });
    expect(stale.body.version).toBe('1.0.0');

    // With it, the replica has not replayed that far: after 500 ms, the primary answers.
    const fallbackBefore = await reads(server.url, 'fallback');
    const waited = await call(server.url, 'GET', path, { token, headers: position });
    expect(waited.body.version).toBe('2.0.0');
    expect(waited.ms).toBeGreaterThanOrEqual(500);
    expect(await reads(server.url, 'fallback')).toBe(fallbackBefore + 1);

    // Replay resumed while a read waits: the replica answers it, with the write.
    const replicaBefore = await reads(server.url, 'replica');
    const pending = call(server.url, 'GET', path, { token, headers: position });
    await pair.onReplica('select pg_wal_replay_resume()');
    const replayed = await pending;
    expect(replayed.body.version).toBe('2.0.0');
    expect(await reads(server.url, 'replica')).toBe(replicaBefore + 1);
  });

  it('reads from the primary while the replica is further behind than allowed, and from the replica again once it caught up', async () => {
    await replicaInUse(server.url, MAX_LAG_MS / 1000);
    await pair.onReplica('select pg_wal_replay_pause()');
    let version = 0;
    // Writes the replica does not replay: its lag grows past the allowed one.
    await waitFor('the replica reported behind', async () => {
      expect((await call(server.url, 'POST', '/v1/repositories', { token, body: record(`3.0.${version++}`) })).status).toBe(201);
      const lag = await metric(server.url, 'repoadmin_db_replica_lag_seconds', '');
      return lag !== undefined && lag > MAX_LAG_MS / 1000;
    }, 20_000, 50);
    const fallbackBefore = await reads(server.url, 'fallback');
    const latest = await call(server.url, 'GET', '/v1/repositories/latest?projectName=rr&groupId=rr&artifactId=lib&branch=main', { token });
    expect(latest.body.version).toBe(`3.0.${version - 1}`);
    expect(await reads(server.url, 'fallback')).toBe(fallbackBefore + 1);
    expect((await call(server.url, 'GET', '/health/ready')).status).toBe(200);

    await pair.onReplica('select pg_wal_replay_resume()');
    await replicaInUse(server.url, MAX_LAG_MS / 1000);
    const replicaBefore = await reads(server.url, 'replica');
    expect((await call(server.url, 'GET', '/v1/repositories/latest?projectName=rr&groupId=rr&artifactId=lib&branch=main', { token })).body.version).toBe(`3.0.${version - 1}`);
    expect(await reads(server.url, 'replica')).toBe(replicaBefore + 1);
  });

  it('reads from the primary when the replica is gone, and stays ready', async () => {
    await replicaInUse(server.url, MAX_LAG_MS / 1000);
    await pair.stopReplica();
    // The first reads may meet the replica's dead connections before its next check: they go to the primary.
    for (let i = 0; i < 20; i++) {
      const res = await call(server.url, 'POST', '/v1/repositories/search', { token, body: { groupId: 'rr', latestVersion: true } });
      expect(res.status).toBe(200);
      expect(res.body.page.totalElements).toBe(1);
    }
    expect((await call(server.url, 'GET', '/health/ready')).status).toBe(200);
    await waitFor('the replica reported gone', async () => Number.isNaN(await metric(server.url, 'repoadmin_db_replica_lag_seconds', '')), 10_000, 100);
  });
});

describe.skipIf(skip)('a server whose database address comes to reach a replica', () => {
  it('answers 503 with Retry-After, drops those connections, and writes again once the address reaches the primary', async () => {
    const pair = await startStreamingPair();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: pair.primaryPort });
    const primary = { host: '127.0.0.1', port: pair.primaryPort };
    let server: ServerProcess | undefined;
    try {
      const env = cleanEnv({ ...pair.serverEnv({ primaryPort: proxy.port }), REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn', REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD });
      server = await startServerProcess([], env, 60_000);
      const token = await login(server.url);
      expect((await call(server.url, 'POST', '/v1/repositories', { token, body: record('1.0.0') })).status).toBe(201);

      // A failover as a virtual IP sees it: the address now reaches the replica (new connections only).
      proxy.retarget({ host: '127.0.0.1', port: pair.replicaPort });
      proxy.set('reset');
      proxy.set('pass');
      // Several at once, so that the pool holds several connections to the replica.
      const refused = await Promise.all([0, 1, 2, 3].map((i) => call(server!.url, 'POST', '/v1/repositories', { token, body: record(`1.1.${i}`) })));
      for (const res of refused) {
        expect(res.status).toBe(503);
        expect(res.body._message.code).toBe('unavailable');
        expect(res.headers.get('retry-after')).toBe('1');
      }

      // The address reaches the primary again; the connections still open to the replica are not moved.
      proxy.retarget(primary);
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 12 && statuses.at(-1) !== 201; attempt++) {
        statuses.push((await call(server.url, 'POST', '/v1/repositories', { token, body: record('1.2.0') })).status);
      }
      expect(statuses.at(-1)).toBe(201);
      expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
      expect(await metric(server.url, 'repoadmin_db_connections_dropped_total', 'pool="primary"')).toBeGreaterThanOrEqual(4);
    } finally {
      await server?.stop('SIGKILL');
      await proxy.close();
      await pair.stop();
    }
  });
});

/**
 * A read address that, like HAProxy's replicas port in front of several replicas, sends each new
 * connection to the next of its servers in turn.
 */
async function startRoundRobin(ports: number[]): Promise<{ port: number; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(ports[next++ % ports.length]!, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(skip)('a server whose read address reaches servers at different positions', () => {
  it('reads after a write only on a connection that has replayed it, whichever server that connection reaches', async () => {
    const pair = await startStreamingPair();
    // Every other connection of the read pool reaches the primary (always at the newest position),
    // the others the replica, whose replay is paused: a position seen on one connection says nothing of another.
    const reads = await startRoundRobin([pair.primaryPort, pair.replicaPort]);
    let server: ServerProcess | undefined;
    try {
      const env = cleanEnv({
        ...pair.serverEnv({ maxLagMs: 60_000 }),
        REPO_MAN_DB_READ_PORT: String(reads.port),
        REPO_MAN_BCRYPT_COST: '4',
        REPO_MAN_LOG_LEVEL: 'warn',
        REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
      });
      server = await startServerProcess([], env, 60_000);
      const token = await login(server.url);
      const first = await call(server.url, 'POST', '/v1/repositories', { token, body: record('1.0.0') });
      expect(first.status).toBe(201);
      await replicaInUse(server.url, 60);
      // The replica holds 1.0.0 before its replay stops (within the allowed lag says nothing of that).
      const firstAt = first.headers.get('x-repoadmin-position')!;
      await waitFor('the replica to replay 1.0.0', async () => {
        const { rows } = await pair.onReplica(`select pg_last_wal_replay_lsn() >= '${firstAt}'::pg_lsn as replayed`);
        return rows[0].replayed === true;
      }, 20_000, 50);
      await pair.onReplica('select pg_wal_replay_pause()');
      const path = '/v1/repositories/latest?projectName=rr&groupId=rr&artifactId=lib&branch=main';
      for (let round = 0; round < 5; round++) {
        const published = await call(server.url, 'POST', '/v1/repositories', { token, body: record(`2.0.${round}`) });
        expect(published.status).toBe(201);
        const position = { 'X-Repoadmin-Position': published.headers.get('x-repoadmin-position')! };
        // Several at once: the read pool holds connections to both servers.
        const answers = await Promise.all([0, 1, 2, 3, 4, 5].map(() => call(server!.url, 'GET', path, { token, headers: position })));
        expect(answers.map((a) => a.body.version)).toEqual(answers.map(() => `2.0.${round}`));
      }
      // Without a position, reads do reach the paused replica (so the rounds above read from it too).
      // Each batch is several at once, so that the pool reaches both servers; the batches stop at the first that reads there.
      const plain: (string | undefined)[] = [];
      for (let batch = 0; batch < 10 && !plain.includes('1.0.0'); batch++) {
        const answers = await Promise.all([0, 1, 2, 3, 4, 5].map(() => call(server!.url, 'GET', path, { token })));
        plain.push(...answers.map((a) => a.body.version as string | undefined));
      }
      expect(plain).toContain('1.0.0');
      expect(plain.filter((v) => v !== '1.0.0' && v !== '2.0.4')).toEqual([]);
    } finally {
      await server?.stop('SIGKILL');
      await reads.close();
      await pair.stop();
    }
  });
});
