// The searches and the latest lookup with and without records in the trash (issue 25), side by side
// in one run on one PostgreSQL server: `npm run bench:trash` on its own, and a section of
// `npm run bench` (run.ts), which sets its seeded database beside one made here. Both databases
// hold the same number of live records; the second also has `trash` records in versions_trash
// (deleted from a larger seed, so its live records had their neighbours deleted as a retention run
// leaves them). The SQL is the server's own (bench/scenarios.ts), timed in alternating turns so that
// both see the same machine.
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { ServerConfig } from '../server/config.js';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';
import { KEYS, LONG_HISTORY_KEY } from './dataset.js';
import { type Scenario, type ScenarioId, scenarios } from './scenarios.js';
import { seedVersions } from './seed.js';

export const TRASH_RECORDS = 100_000;
export const TRASH_ROUNDS = 2_000;

export interface TrashRow {
  scenario: ScenarioId;
  name: string;
  /** Median milliseconds of one request's statements, without and with the trash. */
  plainMs: number;
  trashMs: number;
}

export interface TrashComparison {
  /** Live records (versions) of each database, and the records in the second one's trash. */
  live: [number, number];
  trashed: number;
  rounds: number;
  rows: TrashRow[];
  /** Seconds to make the database with the trash, and to time both. */
  seedSeconds: number;
  seconds: number;
}

export interface BenchDatabase {
  pool: pg.Pool;
  /** Closes the pool and drops the database; once, however often it is called. */
  drop(): Promise<void>;
}

const since = (started: number) => (performance.now() - started) / 1000;

/**
 * A new database on the server of `base`, migrated, seeded with `seeded` records and the long history
 * (dataset.ts), then `trashed` of them (never a key's latest) moved to the trash as a delete moves them.
 */
export async function trashedDatabase(base: URL, seeded: number, trashed: number, longHistory: number, progress: (line: string) => void): Promise<BenchDatabase> {
  const name = `repoadmin_bench_trash_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const drop = async () => {
    const again = new pg.Client({ connectionString: base.toString() });
    await again.connect();
    await again.query(`drop database if exists ${name} with (force)`);
    await again.end();
  };
  const settings: ServerConfig['db'] = {
    kind: 'postgres', driver: 'pg', host: base.hostname, port: Number(base.port || 5432),
    user: decodeURIComponent(base.username || 'postgres'), password: decodeURIComponent(base.password), database: name,
    connectTimeoutMs: 5_000, statementTimeoutMs: 600_000, dataDir: MEMORY,
  };
  const opened = await openDatabase(settings);
  await migrateLatest(opened.db);
  await opened.close();
  const pool = new pg.Pool({ host: settings.host, port: settings.port, user: settings.user, password: settings.password, database: name, max: 4 });
  try {
    await seedVersions([pool, pool], seeded, longHistory, progress);
    if (trashed > 0) {
      // What a delete does, in bulk: the rows move to the trash (never a key's latest, nor a version of
      // the long history, which then stays as long as in a database seeded without a trash).
      await pool.query(`
        with gone as (
          delete from versions where id in (
            select id from versions where not latest_version and not (group_id = $2 and artifact_id = $3) order by md5(uid::text) limit $1
          )
          returning uid, project_name, branch, group_id, artifact_id, version, version_key, repository_url, creation_date, type,
                    latest_version, description, created_at, updated_at
        )
        insert into versions_trash (uid, project_name, branch, group_id, artifact_id, version, version_key, repository_url, creation_date,
                                    type, latest_version, description, created_at, updated_at, deleted_at, deleted_by)
        select *, now(), 'bench' from gone`, [trashed, LONG_HISTORY_KEY.groupId, LONG_HISTORY_KEY.artifactId]);
      await pool.query('vacuum analyze');
    }
  } catch (error) {
    await pool.end();
    await drop();
    throw error;
  }
  let dropping: Promise<void> | undefined;
  return {
    pool,
    drop: () => (dropping ??= pool.end().then(drop)),
  };
}

/** The medians with and without the trash, as `npm run bench:trash` prints them and run.ts's report shows them. */
export function trashTable(trash: TrashComparison): string {
  return [
    '| request | no trash, median ms | with the trash, median ms | with / without |',
    '|---|--:|--:|--:|',
    ...trash.rows.map((r) => `| ${r.name} | ${r.plainMs.toFixed(3)} | ${r.trashMs.toFixed(3)} | ${Math.round((r.trashMs / r.plainMs) * 100)}% |`),
  ].join('\n');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const countOf = async (pool: pg.Pool, table: string) => Number((await pool.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]!.n);

/** Each scenario's statements on both databases in alternating turns, `rounds` times; the medians. */
export async function compareTrash(plain: pg.Pool, withTrash: pg.Pool, list: Scenario[], rounds: number): Promise<Omit<TrashComparison, 'seedSeconds' | 'seconds'>> {
  const live: [number, number] = [await countOf(plain, 'versions'), await countOf(withTrash, 'versions')];
  const trashed = await countOf(withTrash, 'versions_trash');
  const rows: TrashRow[] = [];
  for (const scenario of list.filter((s) => s.statements.length > 0)) {
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i < rounds; i++) {
      for (const [side, pool] of [plain, withTrash].entries()) {
        const started = process.hrtime.bigint();
        await Promise.all(scenario.statements.map((s) => pool.query(s.sql, [...s.bindings])));
        times[side]!.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    rows.push({ scenario: scenario.id, name: scenario.name, plainMs: median(times[0]), trashMs: median(times[1]) });
  }
  return { live, trashed, rounds, rows };
}

/**
 * run.ts's section: its seeded database (`records` records and the long history, not yet loaded by
 * any request) beside a new one seeded with `trashed` more, which go to the trash; the new one is
 * dropped at the end.
 */
export async function trashBesides(
  plain: pg.Pool,
  base: URL,
  options: { records: number; trashed: number; longHistory: number; rounds: number; scenarios: Scenario[] },
  progress: (line: string) => void,
  /** Keeps the drop of the new database for the caller's clean-up too (an interrupted run). */
  onCreated: (drop: () => Promise<void>) => void,
): Promise<TrashComparison> {
  let started = performance.now();
  progress(`PostgreSQL trash: seeding ${(options.records + options.trashed).toLocaleString('en')} records, ${options.trashed.toLocaleString('en')} of them into the trash`);
  const withTrash = await trashedDatabase(base, options.records + options.trashed, options.trashed, options.longHistory, progress);
  onCreated(() => withTrash.drop());
  try {
    const seedSeconds = since(started);
    started = performance.now();
    const compared = await compareTrash(plain, withTrash.pool, options.scenarios, options.rounds);
    return { ...compared, seedSeconds, seconds: since(started) };
  } finally {
    await withTrash.drop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'pg-url': { type: 'string', default: process.env.REPOADMIN_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      records: { type: 'string', default: '1000000' },
      trash: { type: 'string', default: String(TRASH_RECORDS) },
      rounds: { type: 'string', default: String(TRASH_ROUNDS) },
    },
  });
  const records = Number(values.records);
  const trash = Number(values.trash);
  const rounds = Number(values.rounds);
  if (!(records >= KEYS) || !(trash >= 0) || !(rounds >= 1)) {
    throw new Error(`--records must be at least ${KEYS}, --trash 0 or more, --rounds 1 or more`);
  }
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const base = new URL(values['pg-url']!);
  progress(`seeding ${records.toLocaleString('en')} live records twice, the second with ${trash.toLocaleString('en')} more in the trash`);
  const plain = await trashedDatabase(base, records, 0, 0, progress);
  try {
    let started = performance.now();
    const withTrash = await trashedDatabase(base, records + trash, trash, 0, progress);
    try {
      const seedSeconds = since(started);
      started = performance.now();
      const compared = await compareTrash(plain.pool, withTrash.pool, scenarios(), rounds);
      progress(`live: ${compared.live[0]} and ${compared.live[1]}; in the trash: ${compared.trashed}`);
      process.stdout.write(`${trashTable({ ...compared, seedSeconds, seconds: since(started) })}\n`);
    } finally {
      await withTrash.drop();
    }
  } finally {
    await plain.drop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
