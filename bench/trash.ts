// The searches and the latest lookup with and without records in the trash (issue 25), side by side
// in one run on one PostgreSQL server: `npm run bench:trash` on its own, and a section of
// `npm run bench` (run.ts), which sets its seeded database beside two made here. All three hold the
// same number of live records:
// - seeded: that many records seeded, none deleted (run.ts's own database);
// - deleted: `trash` more seeded, then that many deleted, no trash kept;
// - trash: a copy of the second's database before the delete (CREATE DATABASE ... TEMPLATE, so both
//   lay out the same rows in the same pages), the same records deleted, and moved to versions_trash
//   as a delete moves them.
// "trash / deleted" isolates the records in the trash; "deleted / seeded" is what any delete of that
// many records costs the reads (the pages its rows and the rows of the counts it rewrote leave
// behind), trash or not. The SQL is the server's own (bench/scenarios.ts), timed in alternating
// turns so that all three see the same machine, in blocks on new sessions (compareTrash).
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { ServerConfig } from '../server/config.js';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';
import { KEYS, LONG_HISTORY, LONG_HISTORY_KEY } from './dataset.js';
import { type Scenario, type ScenarioId, scenarios } from './scenarios.js';
import { seedVersions } from './seed.js';

export const TRASH_RECORDS = 100_000;
export const TRASH_ROUNDS = 2_000;
/** The rounds are split into this many blocks, each on new sessions of the three databases. */
export const TRASH_BLOCKS = 20;

export interface TrashRow {
  scenario: ScenarioId;
  name: string;
  /** Median milliseconds of one request's statements over all rounds: seeded without deletes, after the deletes without a trash, after the same deletes into the trash. */
  seededMs: number;
  deletedMs: number;
  trashMs: number;
  /** Median over the blocks of each block's trash / deleted and deleted / seeded (block medians): the figures the goal reads. */
  trashRatio: number;
  deletedRatio: number;
  /** Each block's trash / deleted, in order (how far one block's sessions can sway it). */
  blockRatios: number[];
  /** Shared buffers one request's statements touch (EXPLAIN (ANALYZE, BUFFERS)), seeded, deleted, trash: the pages read, whatever the clock says. */
  buffers: [number, number, number];
}

export interface TrashComparison {
  /** Live records (versions) of each database: seeded, deleted, trash. */
  live: [number, number, number];
  /** Records deleted from the second and the third database (the same ones), and the records in the third one's trash. */
  deleted: number;
  trashed: number;
  rounds: number;
  blocks: number;
  rows: TrashRow[];
  /** Seconds to make the two databases with the deletes, and to time all three. */
  seedSeconds: number;
  seconds: number;
}

export interface BenchDatabase {
  name: string;
  pool: pg.Pool;
  /** Closes the pool and drops the database; once, however often it is called. */
  drop(): Promise<void>;
}

const since = (started: number) => (performance.now() - started) / 1000;

async function onServer(base: URL, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

function settingsOf(base: URL, database: string): ServerConfig['db'] {
  return {
    kind: 'postgres', driver: 'pg', host: base.hostname, port: Number(base.port || 5432),
    user: decodeURIComponent(base.username || 'postgres'), password: decodeURIComponent(base.password), database,
    connectTimeoutMs: 5_000, statementTimeoutMs: 600_000, dataDir: MEMORY,
  };
}

/** A pool on database `name` of the server of `base`, and the database's drop. */
function benchDatabase(base: URL, name: string): BenchDatabase {
  const settings = settingsOf(base, name);
  const pool = new pg.Pool({ host: settings.host, port: settings.port, user: settings.user, password: settings.password, database: name, max: 4 });
  let dropping: Promise<void> | undefined;
  return { name, pool, drop: () => (dropping ??= pool.end().then(() => onServer(base, `drop database if exists ${name} with (force)`))) };
}

/** A new database on the server of `base` named `prefix` and a random suffix, migrated and seeded with `seeded` records and the long history (dataset.ts). */
export async function seededDatabase(base: URL, prefix: string, seeded: number, longHistory: number, progress: (line: string) => void): Promise<BenchDatabase> {
  const name = `${prefix}${randomBytes(4).toString('hex')}`;
  await onServer(base, `create database ${name}`);
  const database = benchDatabase(base, name);
  try {
    const opened = await openDatabase(settingsOf(base, name));
    try {
      await migrateLatest(opened.db);
    } finally {
      await opened.close();
    }
    await seedVersions([database.pool, database.pool], seeded, longHistory, progress);
  } catch (error) {
    await database.drop();
    throw error;
  }
  return database;
}

/**
 * The records a retention run could delete, the same in copies of one database: `count` of them,
 * never a key's latest nor a version of the long history (which then stays as long as in a database
 * seeded without deletes), in an order of their uids.
 */
const DOOMED = 'select id from versions where not latest_version and not (group_id = $2 and artifact_id = $3) order by md5(uid::text) limit $1';

/** A delete of those records with no trash kept (the triggers keep the counts and write the events as for any delete). */
const DELETE = `delete from versions where id in (${DOOMED})`;

/** What a delete into the trash does, in bulk: the same records move to versions_trash. */
const MOVE_TO_TRASH = `
  with gone as (
    delete from versions where id in (${DOOMED})
    returning uid, project_name, branch, group_id, artifact_id, version, version_key, repository_url, creation_date, type,
              latest_version, description, created_at, updated_at
  )
  insert into versions_trash (uid, project_name, branch, group_id, artifact_id, version, version_key, repository_url, creation_date,
                              type, latest_version, description, created_at, updated_at, deleted_at, deleted_by)
  select *, now(), 'bench' from gone`;

/**
 * Two databases seeded alike with `seeded` records and the long history, the second a file copy of
 * the first; then `deleted` of the same records deleted from the first and moved to the trash in the
 * second, and both vacuumed and analysed.
 */
export async function deletedPair(
  base: URL,
  prefix: string,
  seeded: number,
  deleted: number,
  longHistory: number,
  progress: (line: string) => void,
  /** Each database's drop as soon as it exists, for the caller's clean-up too (an interrupted run). */
  onCreated: (drop: () => Promise<void>) => void = () => {},
): Promise<{ deleted: BenchDatabase; trash: BenchDatabase }> {
  const first = await seededDatabase(base, `${prefix}deleted_`, seeded, longHistory, progress);
  // A template may have no session open on it while it is copied: a new pool after the copy.
  await first.pool.end();
  const deletedDb = benchDatabase(base, first.name);
  onCreated(() => deletedDb.drop());
  const copy = benchDatabase(base, `${prefix}trash_${randomBytes(4).toString('hex')}`);
  onCreated(() => copy.drop());
  try {
    const admin = new pg.Client({ connectionString: base.toString() });
    await admin.connect();
    try {
      const version = Number((await admin.query<{ v: string }>('show server_version_num')).rows[0]!.v);
      // From PostgreSQL 15 on, FILE_COPY copies the files instead of writing every page to the WAL.
      await admin.query(`create database ${copy.name} template ${first.name}${version >= 150_000 ? ' strategy file_copy' : ''}`);
    } finally {
      await admin.end();
    }
    progress(`deleting ${deleted.toLocaleString('en')} records from ${deletedDb.name}, moving the same to the trash of ${copy.name}`);
    const bindings = [deleted, LONG_HISTORY_KEY.groupId, LONG_HISTORY_KEY.artifactId];
    await Promise.all([
      deletedDb.pool.query(DELETE, bindings).then(() => deletedDb.pool.query('vacuum analyze')),
      copy.pool.query(MOVE_TO_TRASH, bindings).then(() => copy.pool.query('vacuum analyze')),
    ]);
  } catch (error) {
    await Promise.all([deletedDb.drop(), copy.drop()]);
    throw error;
  }
  return { deleted: deletedDb, trash: copy };
}

const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;

/** The medians of the three databases, as `npm run bench:trash` prints them and run.ts's report shows them. */
export function trashTable(trash: TrashComparison): string {
  return [
    '| request | seeded, no deletes, median ms | after the deletes, no trash | after the same deletes, with the trash | trash / same deletes without | its blocks | after the deletes / no deletes | shared buffers: seeded, deleted, trash |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
    ...trash.rows.map(
      (r) =>
        `| ${r.name} | ${r.seededMs.toFixed(3)} | ${r.deletedMs.toFixed(3)} | ${r.trashMs.toFixed(3)} | ${percent(r.trashRatio)} | ` +
        `${r.blockRatios.map(percent).join(' ')} | ${percent(r.deletedRatio)} | ${r.buffers.join(', ')} |`,
    ),
  ].join('\n');
}

/** Requests on each new session before a block is timed. */
const WARM_UP = 20;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const countOf = async (pool: pg.Pool, table: string) => Number((await pool.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]!.n);

/** Shared buffers (hit and read) that one run of `sql` touches: the pages it reads, from its plan's top node. */
async function buffersOf(pool: pg.Pool, sql: string, bindings: readonly unknown[]): Promise<number> {
  const result = await pool.query<{ 'QUERY PLAN': [{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }] }>(
    `explain (analyze, buffers, format json) ${sql}`,
    [...bindings],
  );
  const plan = result.rows[0]!['QUERY PLAN'][0].Plan;
  return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
}

/**
 * Each scenario's statements on the three databases in turns, `rounds` times (each round starting
 * with the next database, so that none always runs first), in `blocks` blocks: each block on a new
 * session of each of the three (a session's own speed, which process it is and where it runs, sways
 * a block's medians by several percent either way; the median of the blocks' ratios does not follow
 * one session). A request's statements run one after the other on the session. Beside the times,
 * the buffers each request's statements touch on each database.
 */
export async function compareTrash(
  seeded: pg.Pool,
  deleted: pg.Pool,
  withTrash: pg.Pool,
  list: Scenario[],
  rounds: number,
  /** No more than `rounds` of them are made: every block has a round at least. */
  asked = TRASH_BLOCKS,
): Promise<Omit<TrashComparison, 'seedSeconds' | 'seconds' | 'deleted'>> {
  const blocks = Math.min(asked, rounds);
  const pools = [seeded, deleted, withTrash];
  const live = (await Promise.all(pools.map((pool) => countOf(pool, 'versions')))) as [number, number, number];
  const trashed = await countOf(withTrash, 'versions_trash');
  const rows: TrashRow[] = [];
  for (const scenario of list.filter((s) => s.statements.length > 0)) {
    // One after the other on one session: the database's work for the request, without two sessions
    // racing for two cores (which alone swung a block's ratio from 64% to 146%).
    const run = async (session: pg.PoolClient) => {
      for (const s of scenario.statements) await session.query(s.sql, [...s.bindings]);
    };
    const times: number[][] = [[], [], []];
    const trashRatios: number[] = [];
    const deletedRatios: number[] = [];
    for (let block = 0; block < blocks; block++) {
      // A new session on each database for the block.
      const sessions = await Promise.all(pools.map((pool) => pool.connect()));
      try {
        for (const side of sessions) for (let i = 0; i < WARM_UP; i++) await run(side);
        const blockTimes: number[][] = [[], [], []];
        // This block's share of the rounds: as many as the next block's, give or take one.
        for (let i = Math.floor((block * rounds) / blocks); i < Math.floor(((block + 1) * rounds) / blocks); i++) {
          for (let turn = 0; turn < pools.length; turn++) {
            const side = (i + turn) % pools.length;
            const started = process.hrtime.bigint();
            await run(sessions[side]!);
            blockTimes[side]!.push(Number(process.hrtime.bigint() - started) / 1e6);
          }
        }
        const [s, d, t] = blockTimes.map(median) as [number, number, number];
        trashRatios.push(t / d);
        deletedRatios.push(d / s);
        blockTimes.forEach((xs, side) => times[side]!.push(...xs));
      } finally {
        // Ended, not returned to the pool: the next block starts on new sessions.
        for (const session of sessions) session.release(true);
      }
    }
    const buffers = await Promise.all(
      pools.map(async (pool) => {
        let sum = 0;
        for (const s of scenario.statements) sum += await buffersOf(pool, s.sql, s.bindings);
        return sum;
      }),
    );
    rows.push({
      scenario: scenario.id,
      name: scenario.name,
      seededMs: median(times[0]!),
      deletedMs: median(times[1]!),
      trashMs: median(times[2]!),
      trashRatio: median(trashRatios),
      deletedRatio: median(deletedRatios),
      blockRatios: trashRatios,
      buffers: buffers as [number, number, number],
    });
  }
  return { live, trashed, rounds, blocks, rows };
}

/**
 * run.ts's section: its seeded database (`records` records and the long history, not yet loaded by
 * any request) beside two new ones seeded with `trashed` more, which are deleted from one and moved
 * to the trash of the other; the new ones are dropped at the end.
 */
export async function trashBesides(
  seeded: pg.Pool,
  base: URL,
  options: { records: number; trashed: number; longHistory: number; rounds: number; scenarios: Scenario[] },
  progress: (line: string) => void,
  /** Keeps the drops of the new databases for the caller's clean-up too (an interrupted run). */
  onCreated: (drop: () => Promise<void>) => void,
): Promise<TrashComparison> {
  let started = performance.now();
  progress(
    `PostgreSQL trash: seeding ${(options.records + options.trashed).toLocaleString('en')} records, then deleting ${options.trashed.toLocaleString('en')} ` +
      'of them without a trash and, in a copy, into the trash',
  );
  const pair = await deletedPair(base, 'repoadmin_bench_', options.records + options.trashed, options.trashed, options.longHistory, progress, onCreated);
  try {
    const seedSeconds = since(started);
    started = performance.now();
    const compared = await compareTrash(seeded, pair.deleted.pool, pair.trash.pool, options.scenarios, options.rounds);
    return { ...compared, deleted: options.trashed, seedSeconds, seconds: since(started) };
  } finally {
    await Promise.all([pair.deleted.drop(), pair.trash.drop()]);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'pg-url': { type: 'string', default: process.env.REPOADMIN_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      records: { type: 'string', default: '1000000' },
      trash: { type: 'string', default: String(TRASH_RECORDS) },
      rounds: { type: 'string', default: String(TRASH_ROUNDS) },
      blocks: { type: 'string', default: String(TRASH_BLOCKS) },
      'long-history': { type: 'string', default: String(LONG_HISTORY) },
      prefix: { type: 'string', default: 'repoadmin_bench_' },
    },
  });
  const records = Number(values.records);
  const trash = Number(values.trash);
  const rounds = Number(values.rounds);
  const blocks = Number(values.blocks);
  const longHistory = Number(values['long-history']);
  const prefix = values.prefix!;
  if (!(records >= KEYS) || !(trash >= 0) || !(rounds >= 1) || !(blocks >= 1 && blocks <= rounds) || !(longHistory >= 0) || !/^[a-z_][a-z0-9_]*$/.test(prefix)) {
    throw new Error(`--records must be at least ${KEYS}, --trash 0 or more, --rounds 1 or more, --blocks 1 to --rounds, --long-history 0 or more, --prefix a lower-case SQL name`);
  }
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const base = new URL(values['pg-url']!);
  progress(`seeding ${records.toLocaleString('en')} records; then twice ${(records + trash).toLocaleString('en')}, of which ${trash.toLocaleString('en')} deleted, without a trash and into the trash`);
  const seeded = await seededDatabase(base, `${prefix}seeded_`, records, longHistory, progress);
  const drops: (() => Promise<void>)[] = [() => seeded.drop()];
  try {
    let started = performance.now();
    const pair = await deletedPair(base, prefix, records + trash, trash, longHistory, progress, (drop) => drops.push(drop));
    const seedSeconds = since(started);
    started = performance.now();
    const compared = await compareTrash(seeded.pool, pair.deleted.pool, pair.trash.pool, scenarios(), rounds, blocks);
    progress(`live: ${compared.live.join(', ')}; deleted: ${trash}; in the trash: ${compared.trashed}`);
    process.stdout.write(`${trashTable({ ...compared, deleted: trash, seedSeconds, seconds: since(started) })}\n`);
  } finally {
    await Promise.all(drops.map((drop) => drop()));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
