// `npm run bench:promotions`: what environments cost on the data of `npm run bench` (dataset.ts)
// in PostgreSQL. "The current version of X in prod" (GET /v1/repositories/latest?...&environment=prod)
// beside the latest lookup of the same artifact, with `--promotions` versions current in prod; and a
// promotion (POST /v1/promotions) beside a publish (POST /v1/repositories). The four requests run
// against the built server in turns of one second each (load.ts, loadHttpInterleaved), so all see the
// same machine. The database and the server are removed at the end.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { ServerConfig } from '../server/config.js';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';
import { ARTIFACTS, keyOf, publishedRecord } from './dataset.js';
import { type HttpRequest, turnsTable } from './load.js';
import { call, killChildren, startServer } from './processes.js';
import { seedVersions } from './seed.js';

const ADMIN_PASSWORD = `bench-${randomBytes(9).toString('base64url')}`;
/** The artifact the latest lookups ask for: the one `npm run bench` asks for (scenarios.ts). */
const TARGET = keyOf(Math.floor(ARTIFACTS * 0.617));
/** Artifacts the promotion scenario takes turns with, each between two of its versions: every request moves a current version. */
const PROMOTED_KEYS = 200;

const progress = (line: string) => process.stderr.write(`${line}\n`);

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    promotions: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '1,16' },
  },
});
const records = Number(values.records);
const promotions = Number(values.promotions);
const connectionsList = values.connections.split(',').map(Number);

async function put(url: string, route: string, body: unknown, token: string): Promise<void> {
  const response = await fetch(`${url}${route}`, { method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  if (response.status >= 300) throw new Error(`PUT ${route}: ${response.status} ${await response.text()}`);
}

/** The first uids of each of `count` artifacts of main that have two records or more (two per artifact), by key. */
async function twoVersionsEach(pool: pg.Pool, count: number): Promise<string[][]> {
  const { rows } = await pool.query<{ uid: string; k: string }>(
    `select uid, project_name || ' ' || group_id || ' ' || artifact_id as k from versions where branch = 'main' order by project_name, group_id, artifact_id, id limit $1`,
    [count * 40],
  );
  const byKey = new Map<string, string[]>();
  for (const row of rows) byKey.set(row.k, [...(byKey.get(row.k) ?? []), row.uid]);
  return [...byKey.values()].filter((uids) => uids.length >= 2).slice(0, count).map((uids) => uids.slice(0, 2));
}

async function main(): Promise<void> {
  const url = new URL(process.env.REPOADMIN_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const name = `repoadmin_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const settings: ServerConfig['db'] = {
    kind: 'postgres',
    driver: 'pg',
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username || 'postgres'),
    password: decodeURIComponent(url.password),
    database: name,
    connectTimeoutMs: 5_000,
    statementTimeoutMs: 10_000,
    dataDir: MEMORY,
  };
  const opened = await openDatabase(settings);
  const pool = new pg.Pool({ host: settings.host, port: settings.port, user: settings.user, password: settings.password, database: name, max: 4 });
  try {
    await migrateLatest(opened.db);
    progress(`PostgreSQL: database ${name}, seeding ${records.toLocaleString('en')} records`);
    await seedVersions([pool, pool], records, 0, progress);
    await pool.query('vacuum analyze');
    const server = await startServer({
      env: {
        REPO_MAN_DB_JDBC: 'postgres',
        REPO_MAN_DB_HOST: settings.host,
        REPO_MAN_DB_PORT: String(settings.port),
        REPO_MAN_DB_USER: settings.user,
        REPO_MAN_DB_PASS: settings.password,
        REPO_MAN_DB_DATABASE: name,
        REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
      },
    });
    try {
      const { token } = (await call(server, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD })) as { token: string };
      const projects = (await pool.query<{ p: string }>('select distinct project_name as p from versions')).rows.map((r) => r.p);
      for (const project of projects) await put(server.url, `/v1/projects/${project}/environments`, { environments: [{ name: 'dev' }, { name: 'prod' }] }, token);
      // `promotions` artifacts current in prod, the target's latest record among them.
      const { rows: latest } = await pool.query<{ uid: string }>(
        `(select uid from versions where group_id = $1 and artifact_id = $2 and branch = 'main' and latest_version)
         union all (select uid from versions where latest_version and branch = 'main' and not (group_id = $1 and artifact_id = $2) order by id limit $3)`,
        [TARGET.groupId, TARGET.artifactId, promotions - 1],
      );
      for (let i = 0; i < latest.length; i += 8) {
        await Promise.all(latest.slice(i, i + 8).map(({ uid }) => call(server, '/v1/promotions', { uid, environment: 'prod' }, token)));
      }
      progress(`${latest.length} versions current in prod`);
      await pool.query('vacuum analyze');
      const flips = await twoVersionsEach(pool, PROMOTED_KEYS);
      const auth = { authorization: `Bearer ${token}` };
      const requests: [string, HttpRequest][] = [
        ['latest of one key', { method: 'GET', path: `/v1/repositories/latest?${new URLSearchParams({ groupId: TARGET.groupId, artifactId: TARGET.artifactId, branch: TARGET.branch })}` }],
        ['current of one key in prod', { method: 'GET', path: `/v1/repositories/latest?${new URLSearchParams({ groupId: TARGET.groupId, artifactId: TARGET.artifactId, environment: 'prod' })}` }],
        ['publish (half latest)', { method: 'POST', path: '/v1/repositories', headers: auth, body: (i) => JSON.stringify(publishedRecord(i)) }],
        [
          'promote into dev',
          {
            method: 'POST',
            path: '/v1/promotions',
            headers: auth,
            body: (i) => JSON.stringify({ uid: flips[i % flips.length]![Math.floor(i / flips.length) % 2], environment: 'dev' }),
          },
        ],
      ];
      const table = await turnsTable(server.url, requests, connectionsList, { seconds: Number(values.seconds), warmupSeconds: Number(values.warmup) });
      process.stdout.write(`PostgreSQL, ${records.toLocaleString('en')} records, ${latest.length} versions current in prod\n\n${table}\n`);
    } finally {
      await server.stop();
    }
  } finally {
    await pool.end();
    await opened.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  killChildren();
  progress(`bench:promotions failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
