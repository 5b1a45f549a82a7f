// `npm run bench`: seeds PostgreSQL (and PGlite, and MariaDB) with a registry's worth of records, loads the real
// server beside the database-only and HTTP-only limits, checks the query plans and writes
// bench/results/<date>.md. Not part of `npm test`.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { ServerConfig } from '../server/config.js';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';
import { useDialect } from '../server/db/dialects/index.js';
import { pgliteDialect } from '../server/db/dialects/pglite.js';
import { SearchQuery, paging } from '../common/schemas/repositories.js';
import { KEYS, LONG_HISTORY, publishedRecord } from './dataset.js';
import { explainMysqlScenarios, explainScenarios } from './explain.js';
import { type HttpRequest, type LoadOptions, type Measurement, loadHttp, loadHttpInterleaved, loadLoop, loadTurns, type Contender } from './load.js';
import { type Child, FLOOR_PATH, call, cpuMsOf, killChildren, startFloor, startMinimal, startReceiver, startServer } from './processes.js';
import { pgbench } from './pgbench.js';
import { type DatabaseRun, type Embedded, type LimitRow, RECORD_ALONE, type Report, type Row, markdown, problems } from './report.js';
import {
  type BenchAuth,
  type DirectDatabase,
  LOGIN_PASSWORD,
  LOGIN_USERS,
  type Scenario,
  type ScenarioId,
  loginUser,
  publishThroughPg,
  scenarios,
} from './scenarios.js';
import { type MysqlSql, seedVersions, seedVersionsMysql } from './seed.js';
import { TRASH_RECORDS, TRASH_ROUNDS, type TrashComparison, trashBesides } from './trash.js';
import { type WebhookRow, measureWebhook } from './webhooks.js';
import type { DrainRound } from './outbox-drain.js';

const require = createRequire(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('results/', import.meta.url));
const DEFAULT_RECORDS = 1_000_000;
const PGLITE_RECORDS = 100_000;
const MYSQL_RECORDS = 100_000;
/**
 * Fewer than the other measurements' 10: every turn with the webhook queues deliveries that the
 * sender then drains, which takes several times the turn (bench/README.md).
 */
const WEBHOOK_SECONDS = 5;
/** Deliveries per round of the sender's drain; three rounds, the first a warm-up. */
const DRAIN_DELIVERIES = 3_000;
const ADMIN_PASSWORD = `bench-${randomBytes(9).toString('base64url')}`;

/** The settings of a server started on a database server's database, as REPO_MAN_* variables. */
function databaseServerEnv(jdbc: 'postgres' | 'mariadb', settings: ServerConfig['db'], database: string): Record<string, string> {
  return {
    REPO_MAN_DB_JDBC: jdbc,
    REPO_MAN_DB_HOST: settings.host,
    REPO_MAN_DB_PORT: String(settings.port),
    REPO_MAN_DB_USER: settings.user,
    REPO_MAN_DB_PASS: settings.password,
    REPO_MAN_DB_DATABASE: database,
    REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
  };
}
/** Scenarios repeated on PGlite: the searches and publishing. */
const PGLITE_SCENARIOS: ScenarioId[] = ['search-group', 'search-branch', 'publish', 'publish-token'];

interface Options {
  records: number;
  pgliteRecords: number;
  pgUrl: string;
  load: Omit<LoadOptions, 'connections'>;
  connections: number[];
  only?: ScenarioId[];
  pglite: boolean;
  mysqlRecords: number;
  /** Versions of the artifact with the long history (dataset.ts), in every database. */
  longHistory: number;
  /** MariaDB/MySQL server; undefined with --no-mysql. */
  mysqlUrl?: string;
  /** Measure the scenarios of one concurrency in turns of a second, instead of one after the other. */
  interleave: boolean;
  cpuProfileDir?: string;
  /** Publishing with one webhook against publishing without (webhooks.ts). */
  webhook: boolean;
  /** Seconds of publishing with the webhook and as many without, per concurrency, in turns of one. */
  webhookSeconds: number;
  /** The webhook sender draining a backlog beside bare POSTs (outbox-drain.ts); 0: no such section. */
  drainDeliveries: number;
  /** Records in the trash beside the PostgreSQL database (trash.ts); 0: no trash section. */
  trash: number;
  trashRounds: number;
}

const USAGE = `npm run bench -- [options]
  --records N          records seeded into PostgreSQL (default ${DEFAULT_RECORDS.toLocaleString('en')}, at least ${KEYS.toLocaleString('en')})
  --pglite-records N   records seeded into PGlite (default ${PGLITE_RECORDS.toLocaleString('en')})
  --no-pglite          skip the PGlite runs
  --mysql-records N    records seeded into MariaDB/MySQL (default ${MYSQL_RECORDS.toLocaleString('en')})
  --no-mysql           skip the MariaDB/MySQL runs
  --long-history N     versions of one artifact on one branch, besides the records (default ${LONG_HISTORY.toLocaleString('en')})
  --seconds S          seconds per measurement (default 10)
  --warmup S           warm-up seconds before each (default 2)
  --connections LIST   concurrencies (default 1,16)
  --only LIST          scenarios: search-group, latest, search-branch, latest-long, search-long, publish, publish-token, login
  --interleave         measure the server's scenarios in turns of one second each (fairer on a busy machine)
  --webhook-seconds S  seconds of publishing with one webhook and as many without, in turns of one, after
                       the warm-up (default ${WEBHOOK_SECONDS}; the sender drains each turn's deliveries before the next)
  --no-webhook         skip publishing with one webhook against publishing without (PostgreSQL)
  --drain N            deliveries per round of the webhook sender draining a backlog, beside as many bare
                       signed POSTs (default ${DRAIN_DELIVERIES.toLocaleString('en')}; bench/outbox-drain.ts)
  --no-drain           skip the webhook sender against bare POSTs
  --trash N            records in the trash for the reads with and without it (default ${TRASH_RECORDS.toLocaleString('en')})
  --trash-rounds N     turns of each read on each database for the trash (default ${TRASH_ROUNDS.toLocaleString('en')})
  --no-trash           skip the reads with and without the trash (PostgreSQL)
  --cpu-prof DIR       write CPU profiles of the server processes into DIR
PostgreSQL: REPOADMIN_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres); the benchmark
creates its own database there and drops it at the end. MariaDB/MySQL: REPOADMIN_BENCH_MYSQL_URL (default
mysql://root@127.0.0.1:3306/test), the same way; the server loads mysql2 from this checkout.`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      records: { type: 'string' },
      'pglite-records': { type: 'string' },
      'no-pglite': { type: 'boolean' },
      'mysql-records': { type: 'string' },
      'no-mysql': { type: 'boolean' },
      'long-history': { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      'cpu-prof': { type: 'string' },
      interleave: { type: 'boolean' },
      'no-webhook': { type: 'boolean' },
      drain: { type: 'string' },
      'no-drain': { type: 'boolean' },
      'webhook-seconds': { type: 'string' },
      trash: { type: 'string' },
      'trash-rounds': { type: 'string' },
      'no-trash': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const count = (name: string, text: string | undefined, fallback: number, min: number) => {
    if (text === undefined) return fallback;
    const n = Number(text.replace(/[_,]/g, ''));
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number of at least ${min}, not "${text}"`);
    return n;
  };
  const known = scenarios().map((s) => s.id);
  const only = values.only?.split(',').map((s) => s.trim()) as ScenarioId[] | undefined;
  const unknown = only?.find((s) => !known.includes(s));
  if (unknown) throw new Error(`--only: unknown scenario "${unknown}"; known: ${known.join(', ')}`);
  return {
    records: Math.floor(count('records', values.records, DEFAULT_RECORDS, KEYS)),
    pgliteRecords: Math.floor(count('pglite-records', values['pglite-records'], PGLITE_RECORDS, KEYS)),
    pgUrl: process.env.REPOADMIN_BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    load: { seconds: count('seconds', values.seconds, 10, 1), warmupSeconds: count('warmup', values.warmup, 2, 0) },
    connections: (values.connections ?? '1,16').split(',').map((c) => Math.floor(count('connections', c, 1, 1))),
    only,
    pglite: !values['no-pglite'],
    mysqlRecords: Math.floor(count('mysql-records', values['mysql-records'], MYSQL_RECORDS, KEYS)),
    longHistory: Math.floor(count('long-history', values['long-history'], LONG_HISTORY, 1)),
    mysqlUrl: values['no-mysql'] ? undefined : process.env.REPOADMIN_BENCH_MYSQL_URL || 'mysql://root@127.0.0.1:3306/test',
    interleave: Boolean(values.interleave),
    cpuProfileDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
    webhook: !values['no-webhook'],
    drainDeliveries: values['no-drain'] ? 0 : Math.floor(count('drain', values.drain, DRAIN_DELIVERIES, 1)),
    webhookSeconds: count('webhook-seconds', values['webhook-seconds'], WEBHOOK_SECONDS, 1),
    trash: values['no-trash'] ? 0 : Math.floor(count('trash', values.trash, TRASH_RECORDS, 0)),
    trashRounds: Math.floor(count('trash-rounds', values['trash-rounds'], TRASH_ROUNDS, 1)),
  };
}

const started = Date.now();
function progress(line: string): void {
  const s = Math.round((Date.now() - started) / 1000);
  process.stderr.write(`[${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${line}\n`);
}

/** Clean-up steps, run last-first on every way out. */
const cleanups: (() => Promise<void>)[] = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    await cleanups
      .pop()!()
      .catch((error: unknown) => progress(`clean-up: ${(error as Error).message}`));
  }
}

/**
 * The administrator's session token and a project token of the same user, so that the two publish
 * scenarios differ only in the credential; and the users the login scenario takes turns with.
 */
async function login(server: Child, list: Scenario[]): Promise<BenchAuth> {
  const { token: jwt } = (await call(server, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD })) as { token: string };
  const { token: projectToken } = (await call(server, '/v1/tokens', { name: 'bench', scope: 'publish' }, jwt)) as { token: string };
  if (list.some((s) => s.id === 'login')) {
    for (let i = 0; i < LOGIN_USERS; i++) {
      await call(server, '/v1/users', { username: loginUser(i), password: LOGIN_PASSWORD, projectName: 'bench', role: 'ROLE_USER' }, jwt);
    }
  }
  return { jwt, projectToken };
}

/** Runs `load` while sampling the server's resident memory; returns its result and the highest RSS seen. */
async function withPeakRss<T>(server: Child, load: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = server.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, server.rss());
  }, 200);
  try {
    const result = await load();
    return { result, peak: Math.max(peak, server.rss()) };
  } finally {
    clearInterval(timer);
  }
}

function fmt(m: Measurement): string {
  const errors = m.errors ? `, ${m.errors} errors (${m.firstError})` : '';
  const cpu = m.cpuMsPerRequest !== undefined ? `, CPU ${(m.cpuMsPerRequest * 1000).toFixed(0)} µs/req` : '';
  return `${Math.round(m.perSecond)}/s p50 ${m.p50Ms.toFixed(2)} ms p99 ${m.p99Ms.toFixed(2)} ms${cpu}${errors}`;
}

interface Part {
  database: DatabaseRun['database'];
  scenarios: Scenario[];
  server: Child;
  auth: BenchAuth;
  /** When given, each server measurement is followed at once by its database-only one, so both see the same machine. */
  direct?: DirectDatabase;
}

interface Measured {
  server: Map<string, Measurement>;
  direct: Map<string, Measurement>;
  memory: DatabaseRun['memory'];
}

async function measureDirect(part: Pick<Part, 'database' | 'auth'>, scenario: Scenario, db: DirectDatabase, connections: number, options: Options) {
  const result = await loadLoop((i) => scenario.direct(db, i, part.auth), { ...options.load, connections });
  progress(`${part.database} SQL     ${scenario.name} c=${connections}: ${fmt(result)}`);
  return result;
}

/** Whether a scenario is measured at this concurrency. */
const measuredAt = (scenario: Scenario, connections: number) => !scenario.connections || scenario.connections.includes(connections);

/** Server measurements of every scenario and concurrency (with their database-only ones), and the server's memory. */
async function measure(part: Part, options: Options): Promise<Measured> {
  const measured: Measured = { server: new Map(), direct: new Map(), memory: { rest: part.server.rss(), peak: 0, after: 0 } };
  measured.memory.peak = measured.memory.rest;
  const record = (scenario: Scenario, connections: number, result: Measurement, peak: number) => {
    measured.memory.peak = Math.max(measured.memory.peak, peak);
    measured.server.set(`${scenario.id}/${connections}`, result);
    progress(`${part.database} server  ${scenario.name} c=${connections}: ${fmt(result)}`);
  };
  const direct = async (scenario: Scenario, connections: number) => {
    if (part.direct) measured.direct.set(`${scenario.id}/${connections}`, await measureDirect(part, scenario, part.direct, connections, options));
  };
  const single = async (scenario: Scenario, connections: number) => {
    const { result, peak } = await withPeakRss(part.server, () =>
      loadHttp(part.server.url, scenario.request(part.auth), { ...options.load, connections }),
    );
    record(scenario, connections, result, peak);
    await direct(scenario, connections);
  };
  if (options.interleave) {
    for (const connections of options.connections) {
      const list = part.scenarios.filter((scenario) => measuredAt(scenario, connections) && !scenario.alone);
      const { result, peak } = await withPeakRss(part.server, () =>
        loadHttpInterleaved(part.server.url, list.map((scenario) => scenario.request(part.auth)), { ...options.load, connections }),
      );
      list.forEach((scenario, i) => record(scenario, connections, result[i]!, peak));
      for (const scenario of list) await direct(scenario, connections);
      for (const scenario of part.scenarios.filter((s) => s.alone && measuredAt(s, connections))) await single(scenario, connections);
    }
  } else {
    for (const scenario of part.scenarios) {
      for (const connections of options.connections.filter((c) => measuredAt(scenario, c))) await single(scenario, connections);
    }
  }
  measured.memory.after = part.server.rss();
  return measured;
}

/** The empty Koa route under the same requests, once per method and concurrency. */
function floorMeasurer(floor: Child, options: Options): (request: HttpRequest, connections: number) => Promise<Measurement> {
  const done = new Map<string, Measurement>();
  return async (request, connections) => {
    const key = `${request.method}/${connections}`;
    const known = done.get(key);
    if (known) return known;
    const result = await loadHttp(floor.url, { ...request, path: FLOOR_PATH }, { ...options.load, connections });
    progress(`Koa floor ${request.method} c=${connections}: ${fmt(result)}`);
    done.set(key, result);
    return result;
  };
}

async function rows(
  database: DatabaseRun['database'],
  list: Scenario[],
  measured: Measured,
  floor: (request: HttpRequest, connections: number) => Promise<Measurement>,
  options: Options,
): Promise<Row[]> {
  const out: Row[] = [];
  for (const scenario of list) {
    for (const connections of options.connections.filter((c) => measuredAt(scenario, c))) {
      const key = `${scenario.id}/${connections}`;
      out.push({
        database,
        scenario: scenario.id,
        name: scenario.name,
        connections,
        server: measured.server.get(key)!,
        direct: measured.direct.get(key)!,
        floor: await floor(scenario.request({ jwt: 'floor', projectToken: 'floor' }), connections),
      });
    }
  }
  return out;
}

async function runPostgres(options: Options, list: Scenario[], floor: ReturnType<typeof floorMeasurer>) {
  const url = new URL(options.pgUrl);
  const name = `repoadmin_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: options.pgUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  cleanups.push(async () => {
    const client = new pg.Client({ connectionString: options.pgUrl });
    await client.connect();
    try {
      await client.query(`drop database if exists ${name} with (force)`);
      progress(`dropped database ${name}`);
    } finally {
      await client.end();
    }
  });
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
  progress(`PostgreSQL: database ${name}, seeding ${options.records.toLocaleString('en')} records`);
  // The server's own knex setup, for the migrations and for publishing straight to the database.
  const opened = await openDatabase(settings);
  cleanups.push(() => opened.close());
  await migrateLatest(opened.db);
  const poolSize = (opened.db.client.config as Knex.Config).pool?.max ?? 10;
  const pool = new pg.Pool({
    host: settings.host,
    port: settings.port,
    user: settings.user,
    password: settings.password,
    database: name,
    max: poolSize,
  });
  cleanups.push(() => pool.end());
  const version = (await pool.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  const seed = await seedVersions([pool, pool], options.records, options.longHistory, progress);
  progress(`PostgreSQL: seeded in ${seed.totalSeconds.toFixed(1)} s`);
  const plans = await explainScenarios(pool, list);
  for (const plan of plans) progress(`EXPLAIN ${plan.scenario} (${plan.label})${plan.seqScan ? ': SEQUENTIAL SCAN' : ''}\n${plan.text}`);
  // Before any request: the seeded database as it is beside the same live records after deletes, without and with a trash.
  let trash: TrashComparison | undefined;
  if (options.trash > 0 && list.some((s) => s.statements.length > 0)) {
    const sizes = { records: options.records, trashed: options.trash, longHistory: options.longHistory, rounds: options.trashRounds, scenarios: list };
    trash = await trashBesides(pool, url, sizes, progress, (drop) => cleanups.push(drop));
    for (const row of trash.rows) progress(`PostgreSQL trash ${row.name}: ${row.seededMs.toFixed(3)} ms seeded, ${row.deletedMs.toFixed(3)} ms after the deletes, ${row.trashMs.toFixed(3)} ms with the trash`);
  }

  const serverEnv = databaseServerEnv('postgres', settings, name);
  const server = await startServer({ env: serverEnv, cpuProfileDir: options.cpuProfileDir });
  cleanups.push(() => server.stop());
  progress(`PostgreSQL: server pid ${server.pid} at ${server.url}`);
  const auth = await login(server, list);
  const direct: DirectDatabase = { query: (sql, b) => pool.query(sql, [...b]), knex: opened.db };
  const measured = await measure({ database: 'PostgreSQL', scenarios: list, server, auth, direct }, options);
  const limits = await measureLimits({ server, auth, list, pool, options, env: serverEnv, pgUrl: databaseUrl(options.pgUrl, name) });
  await server.stop();
  const publish = list.find((s) => s.id === 'publish');
  const webhooks = options.webhook && publish ? await measureWebhooks(serverEnv, pool, publish, options) : undefined;
  const run: DatabaseRun = { database: 'PostgreSQL', records: options.records, seed, plans, memory: measured.memory };
  return { run, rows: await rows('PostgreSQL', list, measured, floor, options), version, limits, webhooks, trash };
}

/** Publishing with one webhook and without, at each concurrency, on a server that may deliver to loopback addresses. */
async function measureWebhooks(env: Record<string, string>, pool: pg.Pool, publish: Scenario, options: Options): Promise<WebhookRow[]> {
  const receiver = await startReceiver();
  cleanups.push(() => receiver.stop());
  const server = await startServer({ env: { ...env, REPO_MAN_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8' }, cpuProfileDir: options.cpuProfileDir });
  cleanups.push(() => server.stop());
  progress(`PostgreSQL: server pid ${server.pid} at ${server.url} with loopback webhooks allowed, receiver pid ${receiver.pid} at ${receiver.url}`);
  const { token: jwt } = (await call(server, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD })) as { token: string };
  const out: WebhookRow[] = [];
  for (const connections of options.connections) {
    const load = { ...options.load, seconds: options.webhookSeconds };
    out.push(await measureWebhook({ server, receiver, jwt, pool, publish: publish.request({ jwt, projectToken: '' }), load, progress }, connections));
  }
  await server.stop();
  await receiver.stop();
  return out;
}

function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The read scenarios measured against a minimal node:http + pg server and pgbench. */
const READS: ScenarioId[] = ['latest', 'search-group', 'latest-long', 'search-long'];
const LIMIT_CONNECTIONS = 16;
/**
 * The least warm-up of each contender before the turns of the limits. The server with two workers
 * and the minimal servers start just before them, while the server with one worker has answered the
 * same requests already: a `node:http` + `pg` server started cold took 4 to 5 seconds of publishing
 * at c=16 (2,000 to 3,000 publishes) to reach its steady CPU per publish, twice the first second's,
 * and turns measured before that count against the cold one (bench/results/2026-11-29-audit-in-statement.md).
 */
const LIMIT_WARMUP_SECONDS = 6;

/**
 * The server with one worker and with two, side by side in turns of one second with the hardest
 * limits: for the reads a minimal node:http + pg server (minimal.ts) and pgbench on the same SQL,
 * for publishing the same transaction straight through pg.
 */
async function measureLimits(part: {
  server: Child;
  auth: BenchAuth;
  list: Scenario[];
  pool: pg.Pool;
  options: Options;
  env: Record<string, string>;
  pgUrl: string;
}): Promise<LimitRow[]> {
  const { list, options } = part;
  const reads = list.filter((s) => READS.includes(s.id));
  const publish = list.find((s) => s.id === 'publish');
  if (reads.length === 0 && !publish) return [];
  const load = { ...options.load, connections: LIMIT_CONNECTIONS, warmupSeconds: Math.max(options.load.warmupSeconds, LIMIT_WARMUP_SECONDS) };
  const workers = await startServer({ env: part.env, args: ['--workers', '2'] });
  cleanups.push(() => workers.stop());
  progress(`PostgreSQL: server with 2 workers, pid ${workers.pid} at ${workers.url}`);
  // Turns of the server with one worker, with two, and the limit.
  const contenders = (request: HttpRequest, limit: Contender): Contender[] => [
    { baseUrl: part.server.url, request, cpuMs: () => cpuMsOf(part.server.pid) },
    { baseUrl: workers.url, request, cpuMs: () => cpuMsOf(workers.pid) },
    limit,
  ];
  const out: LimitRow[] = [];
  if (reads.length > 0) {
    // Each read's statements, by what tells its request apart: the query string of a latest lookup,
    // the body of a search.
    const size = paging(SearchQuery.parse({})).size;
    const latest: Record<string, unknown> = {};
    const search: Record<string, unknown> = {};
    for (const scenario of reads) {
      const request = scenario.request(part.auth);
      if (request.method === 'GET') latest[new URL(request.path, 'http://localhost').search] = scenario.statements[0];
      else search[request.body as string] = { page: scenario.statements[0], count: scenario.statements[1], size, page_: 1 };
    }
    const minimal = await startMinimal({
      MINIMAL_PG_URL: part.pgUrl,
      MINIMAL_POOL: '10',
      MINIMAL_STATEMENTS: JSON.stringify({ latest, search }),
    }, options.cpuProfileDir);
    cleanups.push(() => minimal.stop());
    progress(`PostgreSQL: minimal node:http + pg server pid ${minimal.pid} at ${minimal.url}`);
    const url = new URL(part.pgUrl);
    for (const scenario of reads) {
      const request = scenario.request(part.auth);
      const [one, two, bare] = await loadTurns(contenders(request, { baseUrl: minimal.url, request, cpuMs: () => cpuMsOf(minimal.pid) }), load);
      progress(`PostgreSQL limits ${scenario.name} c=${LIMIT_CONNECTIONS}: 1 worker ${fmt(one!)}; 2 workers ${fmt(two!)}; minimal ${fmt(bare!)}`);
      const pgb = await pgbench(
        { host: url.hostname, port: Number(url.port || 5432), user: decodeURIComponent(url.username || 'postgres'), database: url.pathname.slice(1) },
        scenario.statements,
        LIMIT_CONNECTIONS,
        options.load.seconds,
      );
      progress(`PostgreSQL pgbench ${scenario.name} c=${LIMIT_CONNECTIONS}: ${pgb ? `${Math.round(pgb.perSecond)}/s, mean ${pgb.meanMs} ms` : 'pgbench not found'}`);
      out.push({ scenario: scenario.id, name: scenario.name, connections: LIMIT_CONNECTIONS, server: one!, workers: two!, limit: bare!, limitName: 'node:http + pg', pgbench: pgb });
    }
    await minimal.stop();
  }
  if (publish) {
    const request = publish.request(part.auth);
    // Besides the statement straight through pg, the minimal server publishing with it over HTTP,
    // and another publishing the record alone (no check, no audit entry), as the earlier runs' floor did.
    const caller = { jwt: part.auth.jwt, address: '127.0.0.1' };
    const minimal = await startMinimal({ MINIMAL_PG_URL: part.pgUrl, MINIMAL_POOL: '10' }, options.cpuProfileDir);
    cleanups.push(() => minimal.stop());
    const alone = await startMinimal({ MINIMAL_PG_URL: part.pgUrl, MINIMAL_POOL: '10', MINIMAL_PUBLISH: 'record' });
    cleanups.push(() => alone.stop());
    const bareHttp: Contender = { baseUrl: minimal.url, request, cpuMs: () => cpuMsOf(minimal.pid) };
    const aloneHttp: Contender = { baseUrl: alone.url, request, cpuMs: () => cpuMsOf(alone.pid) };
    const [one, two, direct, http, record] = await loadTurns([...contenders(request, { once: (i) => publishThroughPg(part.pool, i, caller) }), bareHttp, aloneHttp], load);
    progress(`PostgreSQL limits ${publish.name} c=${LIMIT_CONNECTIONS}: 1 worker ${fmt(one!)}; 2 workers ${fmt(two!)}; pg ${fmt(direct!)}; minimal ${fmt(http!)}; minimal, record alone ${fmt(record!)}`);
    const row = { scenario: publish.id, name: publish.name, connections: LIMIT_CONNECTIONS, server: one!, workers: two! };
    out.push(
      { ...row, limit: direct!, limitName: 'pg statement' },
      { ...row, limit: http!, limitName: 'node:http + pg' },
      { ...row, limit: record!, limitName: RECORD_ALONE },
    );
    await minimal.stop();
    await alone.stop();
  }
  await workers.stop();
  return out;
}

function openPglite(dir: string): { lite: PGlite; knex: Knex } {
  const lite = new PGlite(dir);
  const knex = knexFactory({ client: require('knex-pglite'), dialect: 'postgres', connection: { pglite: lite } } as Knex.Config);
  // Opened here rather than by the server's openDatabase: its kind is told as openDatabase tells it.
  useDialect(knex, pgliteDialect);
  return { lite, knex };
}

const EMBEDDED_PUBLISHES = 1_000;

/**
 * The embedded default as a new user meets it: a server on a new data folder (its first start runs
 * initdb), 1,000 publishes four at a time, a stop and a later start; start-up times and RSS.
 */
async function embeddedMemory(options: Options): Promise<Embedded> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'repoadmin-bench-first-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const env = { REPO_MAN_DB_JDBC: 'pglite', REPO_MAN_DATA_DIR: dir, REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD };
  let t0 = performance.now();
  let server = await startServer({ env, cpuProfileDir: options.cpuProfileDir });
  const firstStartMs = performance.now() - t0;
  cleanups.push(() => server.stop());
  const rssFirstStart = server.rss();
  progress(`PGlite first start: ${Math.round(firstStartMs)} ms, RSS ${Math.round(rssFirstStart / 1048576)} MB`);
  const { token } = (await call(server, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD })) as { token: string };
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < EMBEDDED_PUBLISHES) await call(server, '/v1/repositories', publishedRecord(next++), token);
    }),
  );
  const rssAfterPublishes = server.rss();
  progress(`PGlite after ${EMBEDDED_PUBLISHES} publishes: RSS ${Math.round(rssAfterPublishes / 1048576)} MB`);
  await server.stop();
  t0 = performance.now();
  server = await startServer({ env });
  const laterStartMs = performance.now() - t0;
  progress(`PGlite later start: ${Math.round(laterStartMs)} ms, RSS ${Math.round(server.rss() / 1048576)} MB`);
  await server.stop();
  return { firstStartMs, laterStartMs, rssFirstStart, rssAfterPublishes, publishes: EMBEDDED_PUBLISHES };
}

async function runPglite(options: Options, list: Scenario[], floor: ReturnType<typeof floorMeasurer>) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'repoadmin-bench-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  progress(`PGlite: ${dir}, seeding ${options.pgliteRecords.toLocaleString('en')} records`);
  let open = openPglite(dir);
  await migrateLatest(open.knex);
  const seed = await seedVersions([open.lite], options.pgliteRecords, options.longHistory, progress);
  progress(`PGlite: seeded in ${seed.totalSeconds.toFixed(1)} s`);
  const plans = await explainScenarios(open.lite, list);
  for (const plan of plans) progress(`EXPLAIN PGlite ${plan.scenario} (${plan.label})${plan.seqScan ? ': SEQUENTIAL SCAN' : ''}\n${plan.text}`);
  await open.knex.destroy();

  // One process at a time on an embedded database: the server now, the direct runs after it.
  const server = await startServer({
    env: { REPO_MAN_DB_JDBC: 'pglite', REPO_MAN_DATA_DIR: dir, REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD },
    cpuProfileDir: options.cpuProfileDir,
  });
  cleanups.push(() => server.stop());
  progress(`PGlite: server pid ${server.pid} at ${server.url}`);
  const auth = await login(server, list);
  const measured = await measure({ database: 'PGlite', scenarios: list, server, auth }, options);
  await server.stop();

  open = openPglite(dir);
  const { lite, knex } = open;
  cleanups.push(() => knex.destroy());
  const direct: DirectDatabase = { query: (sql, b) => lite.query(sql, [...b]), knex };
  for (const scenario of list) {
    for (const connections of options.connections.filter((c) => measuredAt(scenario, c))) {
      measured.direct.set(`${scenario.id}/${connections}`, await measureDirect({ database: 'PGlite', auth }, scenario, direct, connections, options));
    }
  }
  const run: DatabaseRun = { database: 'PGlite', records: options.pgliteRecords, seed, plans, memory: measured.memory };
  return { run, rows: await rows('PGlite', list, measured, floor, options) };
}

async function runMysql(url: URL, options: Options, list: Scenario[], floor: ReturnType<typeof floorMeasurer>) {
  const mysql = require('mysql2/promise') as {
    createPool(o: Record<string, unknown>): MysqlSql & { end(): Promise<void> };
  };
  const name = `repoadmin_bench_${randomBytes(5).toString('hex')}`;
  const server = { host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username || 'root'), password: decodeURIComponent(url.password) };
  const admin = mysql.createPool({ ...server, connectionLimit: 1 });
  try {
    await admin.query(`create database ${name} character set utf8mb4`);
  } finally {
    await admin.end();
  }
  cleanups.push(async () => {
    const client = mysql.createPool({ ...server, connectionLimit: 1 });
    try {
      await client.query(`drop database if exists ${name}`);
      progress(`dropped database ${name}`);
    } finally {
      await client.end();
    }
  });
  const settings: ServerConfig['db'] = { kind: 'mysql', driver: 'mysql2', ...server, database: name, dataDir: MEMORY, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000 };
  const opened = await openDatabase(settings);
  cleanups.push(() => opened.close());
  const database = opened.description.split(' database ')[0]!;
  progress(`${database}: database ${name}, seeding ${options.mysqlRecords.toLocaleString('en')} records`);
  await migrateLatest(opened.db);
  // The server's own connection settings: UTC, no FOUND_ROWS, utf8mb4.
  const pool = mysql.createPool({
    ...server,
    database: name,
    connectionLimit: (opened.db.client.config as Knex.Config).pool?.max ?? 10,
    charset: 'utf8mb4',
    timezone: 'Z',
    flags: '-FOUND_ROWS',
  });
  cleanups.push(() => pool.end());
  const seed = await seedVersionsMysql(pool, options.mysqlRecords, options.longHistory, progress);
  progress(`${database}: seeded in ${seed.totalSeconds.toFixed(1)} s`);
  const plans = await explainMysqlScenarios(pool, list, database.startsWith('MariaDB'));
  for (const plan of plans) progress(`ANALYZE ${plan.scenario} (${plan.label})${plan.seqScan ? ': FULL SCAN' : ''}\n${plan.text}`);

  const child = await startServer({
    env: databaseServerEnv('mariadb', settings, name),
    cpuProfileDir: options.cpuProfileDir,
  });
  cleanups.push(() => child.stop());
  progress(`${database}: server pid ${child.pid} at ${child.url}`);
  const auth = await login(child, list);
  const direct: DirectDatabase = { query: (sql, b) => pool.query(sql, [...b]), knex: opened.db };
  const measured = await measure({ database: 'MariaDB', scenarios: list, server: child, auth, direct }, options);
  await child.stop();
  const run: DatabaseRun = { database: 'MariaDB', records: options.mysqlRecords, seed, plans, memory: measured.memory };
  return { run, rows: await rows('MariaDB', list, measured, floor, options), version: database };
}

/**
 * The webhook sender draining a backlog of one webhook's deliveries, three rounds, each beside as many
 * bare signed POSTs from one process (bench/outbox-drain.ts, in a process of its own like the server).
 */
function measureDrain(deliveries: number): DrainRound[] {
  progress(`PostgreSQL: the webhook sender draining ${deliveries.toLocaleString('en')} deliveries a round, beside bare POSTs`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'repoadmin-drain-'));
  try {
    const file = path.join(dir, 'drain.json');
    execFileSync(process.execPath, ['--import', 'tsx', 'bench/outbox-drain.ts', '--deliveries', String(deliveries), '--rounds', '3', '--json', file], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return JSON.parse(readFileSync(file, 'utf8')) as DrainRound[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function pgliteVersion(): string {
  const file = path.join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    // The results of earlier runs (bench/results/) are not code.
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'server', 'common', 'bench', ':!bench/results'], { encoding: 'utf8' }).trim();
    return dirty ? `${head} (server, common or bench changed since)` : head;
  } catch {
    return 'unknown';
  }
}

function resultsFile(options: Options, date: Date): string {
  const day = date.toISOString().slice(0, 10);
  return path.join(RESULTS_DIR, options.records === DEFAULT_RECORDS ? `${day}.md` : `${day}-${options.records}.md`);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const date = new Date();
  const all = scenarios().filter((s) => !options.only || options.only.includes(s.id));
  const floorServer = await startFloor();
  cleanups.push(() => floorServer.stop());
  const floor = floorMeasurer(floorServer, options);

  const postgres = await runPostgres(options, all, floor);
  const report: Report = {
    started: date,
    environment: [],
    runs: [postgres.run],
    rows: [...postgres.rows],
    limits: postgres.limits,
    webhooks: postgres.webhooks,
    trash: postgres.trash,
    drain: options.drainDeliveries > 0 ? measureDrain(options.drainDeliveries) : undefined,
  };
  if (options.pglite) {
    report.embedded = await embeddedMemory(options);
    const lite = await runPglite(
      options,
      all.filter((s) => PGLITE_SCENARIOS.includes(s.id)),
      floor,
    );
    report.runs.push(lite.run);
    report.rows.push(...lite.rows);
  }
  let mysqlVersion = '';
  if (options.mysqlUrl) {
    const mysql = await runMysql(new URL(options.mysqlUrl), options, scenarios('mysql').filter((s) => !options.only || options.only.includes(s.id)), floor);
    report.runs.push(mysql.run);
    report.rows.push(...mysql.rows);
    mysqlVersion = `, ${mysql.version}`;
  }
  const cpus = os.cpus();
  report.environment = [
    `commit ${commit()}, Node ${process.version}, PostgreSQL ${postgres.version}, PGlite ${pgliteVersion()}${mysqlVersion}`,
    `${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, ${Math.round(os.totalmem() / 1024 ** 3)} GiB memory, ${os.platform()} ${os.release()}`,
    `options: ${options.records.toLocaleString('en')} records in PostgreSQL, ${options.pglite ? `${options.pgliteRecords.toLocaleString('en')} in PGlite` : 'no PGlite'}, ` +
      `${options.mysqlUrl ? `${options.mysqlRecords.toLocaleString('en')} in MariaDB, ` : ''}${options.load.seconds} s per measurement after ${options.load.warmupSeconds} s warm-up, concurrency ${options.connections.join(' and ')}` +
      (options.interleave ? ', server scenarios interleaved in turns of 1 s' : '') +
      (options.webhook ? `, publishing with a webhook in ${options.webhookSeconds} turns of 1 s` : '') +
      (options.trash > 0 ? `, ${options.trash.toLocaleString('en')} records in the trash (${options.trashRounds.toLocaleString('en')} rounds)` : ''),
    `total time ${Math.round((Date.now() - started) / 1000)} s`,
  ];

  const text = markdown(report);
  const file = resultsFile(options, date);
  writeFileSync(`${file}.tmp`, `${text}\n`);
  renameSync(`${file}.tmp`, file);
  process.stdout.write(`${markdown(report, { plans: false })}\n`);
  const found = problems(report);
  for (const p of found) process.stderr.write(`problem: ${p}\n`);
  progress(`wrote ${path.relative(process.cwd(), file)}`);
  return found.length > 0 ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    progress(`${signal}: stopping`);
    killChildren();
    void cleanUp().finally(() => process.exit(130));
  });
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
  killChildren();
}
