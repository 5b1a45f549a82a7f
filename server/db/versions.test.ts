// The latest lookup and the latest-only search name "latest" as a constant in their SQL, so that the
// plan PostgreSQL keeps for the prepared statement (the generic plan, whatever the values) reads
// the partial unique index versions_one_latest: one row, however long the artifact's history.
// Bound as a parameter, the generic plan cannot use that index and filters the whole history
// (measured with 20,000 versions of one artifact: 710 buffers and 32 ms against 2 buffers and
// 0.07 ms). MariaDB's index of latest records is versions_one_latest over latest_marker, which its
// latest lookup reads.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchFilters } from '../../common/schemas/repositories.js';
import { type TestDatabase, createTestDatabase, dbKinds } from '../../test/helpers/db.js';
import { type Database, migrateLatest, openDatabase } from './connect.js';
import { dialectOf } from './dialects/index.js';
import { latestQuery, pageQuery, publishKey, toRow } from './versions.js';

const HISTORY = 300;

describe.each(dbKinds())('the latest statements on %s', (kind) => {
  let database: TestDatabase;
  let opened: Database;
  let db: Knex;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    opened = await openDatabase(database.settings);
    db = opened.db;
    await migrateLatest(db);
    const rows = Array.from({ length: HISTORY }, (_, n) => ({
      ...toRow({
        projectName: 'p', branch: 'main', groupId: 'g', artifactId: 'long', version: `1.0.${n}`, repositoryUrl: null,
        creationDate: new Date(Date.UTC(2020, 0, 1) + n * 60_000), type: 'LIBRARY', latestVersion: n === HISTORY - 1, description: null,
      }),
      uid: crypto.randomUUID(),
      updated_at: new Date(),
    }));
    await db.batchInsert('versions', rows, 100);
    await db.raw(kind === 'mysql' ? 'analyze table versions' : 'analyze versions');
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await database?.drop();
  });

  /** The plan of the statement as the server sends it: PostgreSQL's generic plan of the prepared statement. */
  async function plan(sql: string, values: unknown[]): Promise<string> {
    const form = dialectOf(db);
    if (kind === 'mysql') {
      const [rows] = (await db.raw(`explain ${sql}`, values as Knex.RawBinding[])) as [{ key: string | null }[]];
      return rows.map((r) => r.key).join(' ');
    }
    return db.transaction(async (trx) => {
      await trx.raw('set local plan_cache_mode = force_generic_plan');
      await trx.raw(`prepare latest_plan as ${form.native(sql)}`);
      const literals = values.map((v) => `'${String(v).replace(/'/g, "''")}'`).join(', ');
      const result = (await trx.raw(`explain (analyze, buffers) execute latest_plan(${literals})`)) as { rows: { 'QUERY PLAN': string }[] };
      await trx.raw('deallocate latest_plan');
      return result.rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  }

  it('the latest lookup reads the index of latest records, not the history', async () => {
    const query = latestQuery(dialectOf(db), { groupId: 'g', artifactId: 'long', branch: 'main', projectName: 'p' });
    const text = await plan(query.build(), query.values);
    expect(text).toContain('versions_one_latest');
    if (kind !== 'mysql') expect(text).not.toContain('Rows Removed by Filter');
  });

  // MariaDB prefers versions_group_artifact here, whose order is the page's (no sort), and reads the
  // history until the page is full: not so on PostgreSQL.
  if (kind !== 'mysql') it('so does the latest-only search of one artifact', async () => {
    const filters = { groupId: 'g', artifactId: 'long', latestVersion: true } as SearchFilters;
    const query = pageQuery(dialectOf(db), filters, { page: 1, size: 10, sortDirection: 'ASC' } as never);
    const text = await plan(query.build(), query.values);
    expect(text).toContain('versions_one_latest');
  });
});

// The key's lock orders the publishes that move one latest flag; publishes of other keys do not wait for it.
describe('the lock a publish takes', () => {
  const fields = { projectName: 'p', branch: 'main', groupId: 'g', artifactId: 'a', version: '1.0.0', repositoryUrl: null, creationDate: new Date(0), type: 'LIBRARY', latestVersion: true, description: null };
  it('is one per project, group, artifact and branch, whatever the version', () => {
    const lock = publishKey(fields).lock;
    expect(publishKey({ ...fields, version: '2.0.0', latestVersion: false }).lock).toBe(lock);
    for (const other of [{ projectName: 'q' }, { branch: 'dev' }, { groupId: 'h' }, { artifactId: 'b' }]) {
      expect(publishKey({ ...fields, ...other }).lock).not.toBe(lock);
    }
    // Parts that run together in one text do not make another key's lock.
    expect(publishKey({ ...fields, groupId: 'g.a', artifactId: 'b' }).lock).not.toBe(publishKey({ ...fields, groupId: 'g', artifactId: 'a.b' }).lock);
  });
});
