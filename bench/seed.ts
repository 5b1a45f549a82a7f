// Bulk seeding of the versions table: batched multi-row inserts with the secondary indexes dropped,
// then the indexes rebuilt from their own catalog definitions, then VACUUM ANALYZE of the database.
import { randomUUID } from 'node:crypto';
import { toRow } from '../server/db/versions.js';
import { recordOf, seededRecordOf } from './dataset.js';

/** What both `pg.Pool` and PGlite offer. */
export interface Sql {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

export interface SeedTiming {
  records: number;
  insertSeconds: number;
  indexSeconds: number;
  vacuumSeconds: number;
  totalSeconds: number;
}

const BATCH = 5_000;

function seconds(since: bigint): number {
  return Number(process.hrtime.bigint() - since) / 1e9;
}

/** The unique constraints and plain indexes of the table besides its primary key, as DDL to recreate them. */
async function secondaryIndexes(sql: Sql): Promise<{ drop: string[]; create: string[] }> {
  const constraints = await sql.query<{ name: string; def: string }>(
    `select conname as name, pg_get_constraintdef(oid) as def from pg_constraint
     where conrelid = 'versions'::regclass and contype = 'u'`,
  );
  const owned = new Set(constraints.rows.map((c) => c.name));
  const indexes = await sql.query<{ name: string; def: string }>(
    `select indexname as name, indexdef as def from pg_indexes
     where schemaname = current_schema() and tablename = 'versions' and indexname <> 'versions_pkey'`,
  );
  const plain = indexes.rows.filter((i) => !owned.has(i.name));
  return {
    drop: [
      ...constraints.rows.map((c) => `alter table versions drop constraint "${c.name}"`),
      ...plain.map((i) => `drop index "${i.name}"`),
    ],
    create: [
      ...constraints.rows.map((c) => `alter table versions add constraint "${c.name}" ${c.def}`),
      ...plain.map((i) => i.def),
    ],
  };
}

/** `insert ... select * from unnest($1::type[], ...)`: one statement and one array per column per batch. */
async function insertStatement(sql: Sql, columns: string[]): Promise<string> {
  const types = await sql.query<{ name: string; type: string }>(
    `select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
     where attrelid = 'versions'::regclass and attnum > 0 and not attisdropped`,
  );
  const typeOf = new Map(types.rows.map((t) => [t.name, t.type]));
  const casts = columns.map((c, i) => `$${i + 1}::${typeOf.get(c)}[]`);
  return `insert into versions (${columns.join(', ')}) select * from unnest(${casts.join(', ')})`;
}

function batchOf(from: number, to: number, total: number, longHistory: number, columns: string[]): unknown[][] {
  const arrays: unknown[][] = columns.map(() => []);
  for (let i = from; i < to; i++) {
    const fields = seededRecordOf(i, total, longHistory);
    const row: Record<string, unknown> = {
      ...toRow(fields),
      uid: randomUUID(),
      created_at: fields.creationDate,
      updated_at: fields.creationDate,
    };
    columns.forEach((c, j) => arrays[j]!.push(row[c]));
  }
  return arrays;
}

/**
 * Seeds `total` records and the long history of `longHistory` versions (dataset.ts) through the
 * given connections (batches run on all of them at once) into an empty, migrated versions table.
 */
export async function seedVersions(connections: Sql[], total: number, longHistory: number, progress: (line: string) => void): Promise<SeedTiming> {
  const sql = connections[0]!;
  const started = process.hrtime.bigint();
  const sample = recordOf(0, total);
  const columns = [...Object.keys(toRow(sample)), 'uid', 'created_at', 'updated_at'];
  const insert = await insertStatement(sql, columns);
  const indexes = await secondaryIndexes(sql);
  for (const statement of indexes.drop) await sql.query(statement);
  // A bulk load, not a million publishes: no event per seeded record (migration 20261125100000_events).
  await sql.query('alter table versions disable trigger versions_events');

  const rows = total + longHistory;
  let next = 0;
  let done = 0;
  let reported = 0;
  await Promise.all(
    connections.map(async (connection) => {
      while (next < rows) {
        const from = next;
        const to = Math.min(rows, from + BATCH);
        next = to;
        await connection.query(insert, batchOf(from, to, total, longHistory, columns));
        done += to - from;
        if (done - reported >= rows / 10) {
          reported = done;
          progress(`seeded ${done.toLocaleString('en')} of ${rows.toLocaleString('en')} records`);
        }
      }
    }),
  );
  await sql.query('alter table versions enable trigger versions_events');
  // Each key's latest, as the migration records it, so the first move of a key names where it came from.
  await sql.query(`insert into latest_keys (project_name, branch, group_id, artifact_id, version, seq)
    select project_name, branch, group_id, artifact_id, max(version), 0 from versions where latest_version
    group by project_name, branch, group_id, artifact_id on conflict do nothing`);
  const insertSeconds = seconds(started);

  const indexing = process.hrtime.bigint();
  for (const statement of indexes.create) await sql.query(statement);
  const indexSeconds = seconds(indexing);

  const vacuuming = process.hrtime.bigint();
  // The whole database: tables that triggers keep beside versions were written as often as it was.
  await sql.query('vacuum analyze');
  const vacuumSeconds = seconds(vacuuming);
  return { records: rows, insertSeconds, indexSeconds, vacuumSeconds, totalSeconds: seconds(started) };
}

/** What a mysql2 promise pool offers. */
export interface MysqlSql {
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
}

const MYSQL_BATCH = 1_000;

/**
 * Seeds `total` records and the long history into an empty, migrated versions table on MariaDB/MySQL: multi-row inserts
 * on two connections at once, the indexes kept (InnoDB builds them as it goes, and the triggers keep
 * the counts), then ANALYZE TABLE.
 */
export async function seedVersionsMysql(sql: MysqlSql, total: number, longHistory: number, progress: (line: string) => void): Promise<SeedTiming> {
  const started = process.hrtime.bigint();
  const columns = [...Object.keys(toRow(recordOf(0, total))), 'uid', 'created_at', 'updated_at'];
  const insert = `insert into versions (${columns.join(', ')}) values ?`;
  const all = total + longHistory;
  let next = 0;
  let done = 0;
  let reported = 0;
  await Promise.all(
    [0, 1].map(async () => {
      while (next < all) {
        const from = next;
        const to = Math.min(all, from + MYSQL_BATCH);
        next = to;
        const rows: unknown[][] = [];
        for (let i = from; i < to; i++) {
          const fields = seededRecordOf(i, total, longHistory);
          const row: Record<string, unknown> = { ...toRow(fields), uid: randomUUID(), created_at: fields.creationDate, updated_at: fields.creationDate };
          rows.push(columns.map((c) => row[c]));
        }
        await sql.query(insert, [rows]);
        done += to - from;
        if (done - reported >= all / 10) {
          reported = done;
          progress(`seeded ${done.toLocaleString('en')} of ${all.toLocaleString('en')} records`);
        }
      }
    }),
  );
  const insertSeconds = seconds(started);
  const analysing = process.hrtime.bigint();
  await sql.query('analyze table versions, version_counts, users');
  const vacuumSeconds = seconds(analysing);
  return { records: all, insertSeconds, indexSeconds: 0, vacuumSeconds, totalSeconds: seconds(started) };
}
