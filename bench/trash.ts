// `npm run bench:trash`: the searches and the latest lookup with and without records in the trash,
// side by side in one run on one PostgreSQL server. Two databases hold the same number of live
// records; the second also has --trash records in versions_trash (deleted from a larger seed, so
// its live records had their neighbours deleted as a retention run leaves them). The SQL is the
// server's own (bench/scenarios.ts), timed in alternating turns so that both see the same machine.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { ServerConfig } from '../server/config.js';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';
import { KEYS } from './dataset.js';
import { scenarios } from './scenarios.js';
import { seedVersions } from './seed.js';

const { values } = parseArgs({
  options: {
    'pg-url': { type: 'string', default: process.env.REPOADMIN_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    records: { type: 'string', default: '1000000' },
    trash: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2000' },
  },
});
const records = Number(values.records);
const trash = Number(values.trash);
const rounds = Number(values.rounds);
if (!(records >= KEYS) || !(trash >= 0) || !(rounds >= 1)) {
  throw new Error(`--records must be at least ${KEYS}, --trash 0 or more, --rounds 1 or more`);
}
const progress = (line: string) => process.stderr.write(`${line}\n`);

async function database(base: URL, seeded: number, trashed: number): Promise<{ pool: pg.Pool; drop(): Promise<void> }> {
  const name = `repoadmin_bench_trash_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const settings: ServerConfig['db'] = {
    kind: 'postgres', driver: 'pg', host: base.hostname, port: Number(base.port || 5432),
    user: decodeURIComponent(base.username || 'postgres'), password: decodeURIComponent(base.password), database: name,
    connectTimeoutMs: 5_000, statementTimeoutMs: 600_000, dataDir: MEMORY,
  };
  const opened = await openDatabase(settings);
  await migrateLatest(opened.db);
  await opened.close();
  const pool = new pg.Pool({ host: settings.host, port: settings.port, user: settings.user, password: settings.password, database: name, max: 4 });
  await seedVersions([pool, pool], seeded, 0, progress);
  if (trashed > 0) {
    // What a delete does, in bulk: the rows move to the trash (never a key's latest).
    await pool.query(`
      with gone as (
        delete from versions where id in (select id from versions where not latest_version order by md5(uid::text) limit $1)
        returning uid, project_name, branch, group_id, artifact_id, version, version_key, repository_url, creation_date, type,
                  latest_version, description, created_at, updated_at
      )
      insert into versions_trash (uid, project_name, branch, group_id, artifact_id, version, version_key, repository_url, creation_date,
                                  type, latest_version, description, created_at, updated_at, deleted_at, deleted_by)
      select *, now(), 'bench' from gone`, [trashed]);
    await pool.query('vacuum analyze');
  }
  return {
    pool,
    drop: async () => {
      await pool.end();
      const again = new pg.Client({ connectionString: base.toString() });
      await again.connect();
      await again.query(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const base = new URL(values['pg-url']!);
  progress(`seeding ${records.toLocaleString('en')} live records twice, the second with ${trash.toLocaleString('en')} more in the trash`);
  const plain = await database(base, records, 0);
  const withTrash = await database(base, records + trash, trash);
  try {
    const live = async (pool: pg.Pool) => Number((await pool.query('select count(*) as n from versions')).rows[0].n);
    const inTrash = Number((await withTrash.pool.query('select count(*) as n from versions_trash')).rows[0].n);
    progress(`live: ${await live(plain.pool)} and ${await live(withTrash.pool)}; in the trash: ${inTrash}`);
    const lines = ['| scenario | no trash (median ms) | with trash (median ms) | ratio |', '|---|---|---|---|'];
    for (const scenario of scenarios().filter((s) => s.statements.length > 0)) {
      const times: [number[], number[]] = [[], []];
      for (let i = 0; i < rounds; i++) {
        for (const [side, db] of [plain, withTrash].entries()) {
          const started = process.hrtime.bigint();
          await Promise.all(scenario.statements.map((s) => db.pool.query(s.sql, [...s.bindings])));
          times[side]!.push(Number(process.hrtime.bigint() - started) / 1e6);
        }
      }
      const [a, b] = times.map(median) as [number, number];
      lines.push(`| ${scenario.name} | ${a.toFixed(3)} | ${b.toFixed(3)} | ${(b / a).toFixed(2)} |`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await plain.drop();
    await withTrash.drop();
  }
}

await main();
