// The latest lookup and the latest-only search name "latest" as a constant in their SQL, so that the
// plan PostgreSQL keeps for the prepared statement (the generic plan, whatever the values) reads
// the partial unique index versions_one_latest: one row, however long the artifact's history.
// Bound as a parameter, the generic plan cannot use that index and filters the whole history
// (measured with 20,000 versions of one artifact: 710 buffers and 32 ms against 2 buffers and
// 0.07 ms). MariaDB's index of latest records is versions_one_latest over latest_marker, which its
// latest lookup reads.
// The data has the statistics of real use: many artifacts of one version beside one with a long
// history. With them the latest-only search, ordered and paged in one query, walked the long history
// in the page's order in one plan or the other (the generic plan, or the plan for its values), so it
// reads the group's latest records first (versions.ts, pageQuery).
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PageRequest, SORT_FIELDS, type SearchFilters } from '../../common/schemas/repositories.js';
import { type TestDatabase, createTestDatabase, dbKinds } from '../../test/helpers/db.js';
import { type Database, migrateLatest, openDatabase } from './connect.js';
import { dialectOf } from './dialects/index.js';
import { type ShapedQuery, latestQuery, pageQuery, publishKey, toRow } from './versions.js';

const HISTORY = 2_000;
/** Artifacts of one version each, beside the long history. */
const OTHERS = 4_000;

describe.each(dbKinds())('the latest statements on %s', (kind) => {
  let database: TestDatabase;
  let opened: Database;
  let db: Knex;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    opened = await openDatabase(database.settings);
    db = opened.db;
    await migrateLatest(db);
    const row = (groupId: string, artifactId: string, version: string, n: number, latestVersion: boolean) => ({
      ...toRow({
        projectName: 'p', branch: 'main', groupId, artifactId, version, repositoryUrl: null,
        creationDate: new Date(Date.UTC(2020, 0, 1) + n * 60_000), type: 'LIBRARY', latestVersion, description: null,
      }),
      uid: crypto.randomUUID(),
      updated_at: new Date(),
    });
    const rows = [
      ...Array.from({ length: HISTORY }, (_, n) => row('g', 'long', `1.0.${n}`, n, n === HISTORY - 1)),
      ...Array.from({ length: OTHERS }, (_, n) => row(`g${n % 50}`, `a${n}`, '1.0', n, true)),
    ];
    await db.batchInsert('versions', rows, 500);
    await db.raw(kind === 'mysql' ? 'analyze table versions' : 'analyze versions');
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await database?.drop();
  });

  /**
   * The plan of the statement as the server sends it: PostgreSQL's generic plan of the prepared
   * statement (which it keeps once that looks no dearer), or with `forValues` its plan for the values.
   */
  async function plan(sql: string, values: unknown[], forValues = false): Promise<string> {
    const form = dialectOf(db);
    if (kind === 'mysql') {
      const [rows] = (await db.raw(`explain ${sql}`, values as Knex.RawBinding[])) as [{ key: string | null }[]];
      return rows.map((r) => r.key).join(' ');
    }
    return db.transaction(async (trx) => {
      await trx.raw(`set local plan_cache_mode = ${forValues ? 'force_custom_plan' : 'force_generic_plan'}`);
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
  if (kind !== 'mysql') it('so does the latest-only search of one artifact or one group, in either plan', async () => {
    const searches: SearchFilters[] = [
      { groupId: 'g', artifactId: 'long', latestVersion: true } as SearchFilters,
      { groupId: 'g', latestVersion: true } as SearchFilters,
    ];
    for (const filters of searches) {
      const query = pageQuery(dialectOf(db), filters, { page: 1, size: 10, sortDirection: 'ASC' } as never);
      for (const forValues of [false, true]) {
        const text = await plan(query.build(), query.values, forValues);
        expect(text).toContain('versions_one_latest');
        expect(text).not.toContain('Rows Removed by Filter');
      }
    }
  });

  if (kind !== 'mysql') it('reads the same page of the latest-only search of a group, read first or not, in every order', async () => {
    const form = dialectOf(db);
    const filters = { groupId: 'g0', latestVersion: true } as SearchFilters;
    const uids = async (query: ShapedQuery) => {
      const result = (await db.raw(query.build(), query.values as Knex.RawBinding[])) as { rows: { uid: string }[] };
      return result.rows.map((r) => r.uid);
    };
    for (const sortField of [undefined, ...SORT_FIELDS]) {
      for (const sortDirection of ['ASC', 'DESC'] as const) {
        for (const page of [1, 3]) {
          const paging = { page, size: 7, sortField, sortDirection } as PageRequest;
          const read = pageQuery(form, filters, paging);
          expect(read.build()).toContain('materialized');
          const inOne = pageQuery({ ...form, fenced: undefined }, filters, paging);
          const expected = await uids(inOne);
          expect(expected).toHaveLength(7);
          expect(await uids(read)).toEqual(expected);
        }
      }
    }
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
