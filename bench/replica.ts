// `npm run bench:replica`: reads through a read replica beside reads from the primary, on a real
// streaming replica of this machine (test/helpers/streaming.ts: initdb, pg_basebackup -R; it needs
// root, as the read-replica tests do). Two built servers on the same data: A reads from the primary
// only, B from the replica (--repoadmin_db_read_host). The latest lookup of one artifact is measured
// on each in turns of one second (load.ts, loadTurns), with each server's CPU per read and the
// machine's. Then A publishes under load for some seconds while B's replica lag
// (`repoadmin_db_replica_lag_seconds`) is read every 100 ms. Two cores cannot show what a replica on
// its own machine adds: the CPU per read says how many reads a core of each serves.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { ServerConfig } from '../server/config.js';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';
import { startStreamingPair } from '../test/helpers/streaming.js';
import { ARTIFACTS, keyOf, publishedRecord } from './dataset.js';
import { type HttpRequest, loadHttp, loadTurns } from './load.js';
import { call, cpuMsOf, killChildren, startServer } from './processes.js';
import { seedVersions } from './seed.js';

const ADMIN_PASSWORD = `bench-${randomBytes(9).toString('base64url')}`;
/** The artifact the latest lookups ask for: the one `npm run bench` asks for (scenarios.ts). */
const TARGET = keyOf(Math.floor(ARTIFACTS * 0.617));

const progress = (line: string) => process.stderr.write(`${line}\n`);

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    'publish-seconds': { type: 'string', default: '10' },
  },
});

async function lagSeconds(url: string): Promise<number | undefined> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text());
  const line = text.split('\n').find((l) => l.startsWith('repoadmin_db_replica_lag_seconds'));
  const value = line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
  return Number.isNaN(value) ? undefined : value;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const records = Number(values.records);
  progress('starting a primary and its streaming replica');
  const pair = await startStreamingPair();
  try {
    const settings: ServerConfig['db'] = {
      kind: 'postgres',
      driver: 'pg',
      host: '127.0.0.1',
      port: pair.primaryPort,
      user: 'postgres',
      password: '',
      database: 'repoadmin',
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 60_000,
      dataDir: MEMORY,
    };
    const opened = await openDatabase(settings);
    const pool = new pg.Pool({ host: '127.0.0.1', port: pair.primaryPort, user: 'postgres', database: 'repoadmin', max: 4 });
    try {
      await migrateLatest(opened.db);
      progress(`seeding ${records.toLocaleString('en')} records`);
      await seedVersions([pool, pool], records, 0, progress);
      await pool.query('vacuum analyze');
    } finally {
      await pool.end();
      await opened.close();
    }
    const common = { REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD, REPO_MAN_LOG_LEVEL: 'warn' };
    const withReplica = pair.serverEnv({ maxLagMs: 1000 });
    const primaryOnly = Object.fromEntries(Object.entries(withReplica).filter(([key]) => !key.startsWith('REPO_MAN_DB_READ_')));
    const a = await startServer({ env: { ...primaryOnly, ...common } });
    const b = await startServer({ env: { ...withReplica, ...common } });
    try {
      for (let i = 0; (await lagSeconds(b.url)) === undefined; i++) {
        if (i > 200) throw new Error('the replica was never in use');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const latest: HttpRequest = { method: 'GET', path: `/v1/repositories/latest?${new URLSearchParams({ groupId: TARGET.groupId, artifactId: TARGET.artifactId, branch: TARGET.branch })}` };
      const options = { connections: Number(values.connections), seconds: Number(values.seconds), warmupSeconds: Number(values.warmup) };
      const [fromPrimary, fromReplica] = await loadTurns(
        [
          { baseUrl: a.url, request: latest, cpuMs: () => cpuMsOf(a.pid) },
          { baseUrl: b.url, request: latest, cpuMs: () => cpuMsOf(b.pid) },
        ],
        options,
      );
      const reads = await fetch(`${b.url}/metrics`).then((r) => r.text());
      const target = (name: string) => {
        const line = reads.split('\n').find((l) => l.startsWith('repoadmin_db_reads_total{') && l.includes(`target="${name}"`));
        return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
      };

      // The replica's lag while A publishes as fast as 16 connections can.
      const { token } = (await call(a, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD })) as { token: string };
      const samples: number[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const lag = await lagSeconds(b.url);
          if (lag !== undefined) samples.push(lag * 1000);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const publishing = await loadHttp(
        a.url,
        { method: 'POST', path: '/v1/repositories', headers: { authorization: `Bearer ${token}` }, body: (i) => JSON.stringify(publishedRecord(i)) },
        { connections: 16, seconds: Number(values['publish-seconds']), warmupSeconds: 0 },
      );
      sampling = false;
      await sampler;
      const sorted = [...samples].sort((x, y) => x - y);

      const row = (name: string, m: typeof fromPrimary) =>
        `| ${name} | ${Math.round(m!.perSecond)} | ${m!.p50Ms.toFixed(2)} | ${m!.p99Ms.toFixed(2)} | ${m!.cpuMsPerRequest !== undefined ? (m!.cpuMsPerRequest * 1000).toFixed(0) : '-'} | ${m!.machineCpuMsPerRequest !== undefined ? (m!.machineCpuMsPerRequest * 1000).toFixed(0) : '-'} | ${m!.errors} |`;
      process.stdout.write(
        [
          `PostgreSQL 15, ${records.toLocaleString('en')} records, a streaming replica on the same machine; ${options.connections} connections`,
          '',
          '| latest lookup of one artifact | answers/s | p50 ms | p99 ms | server CPU µs/read | machine CPU µs/read | errors |',
          '|---|---|---|---|---|---|---|',
          row('server A, reading from the primary', fromPrimary),
          row('server B, reading from the replica', fromReplica),
          '',
          `Server B's reads by target: replica ${target('replica')}, fallback ${target('fallback')}, primary ${target('primary')}.`,
          '',
          `Publishing through A at ${Math.round(publishing.perSecond)} a second (16 connections, ${values['publish-seconds']} s): B's replica lag, read every 100 ms (${sorted.length} samples): median ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms, most ${(sorted.at(-1) ?? NaN).toFixed(0)} ms.`,
          '',
        ].join('\n'),
      );
    } finally {
      await a.stop();
      await b.stop();
    }
  } finally {
    await pair.stop();
  }
}

main().catch((error: unknown) => {
  killChildren();
  progress(`bench:replica failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
