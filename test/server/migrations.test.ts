// Migrations: all up, all down, all up again, on an empty database of each kind.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/connect.js';
import { MIGRATION_CONFIG } from '../../server/db/migrations/index.js';
import { createTestDatabase, dbKinds } from '../helpers/db.js';

const TABLES = ['login_attempts', 'revoked_tokens', 'settings', 'tokens', 'users', 'version_counts', 'versions'];

async function tables(db: Awaited<ReturnType<typeof openDatabase>>['db']): Promise<string[]> {
  const result = await db.raw("select tablename from pg_tables where schemaname = 'public' order by tablename");
  return (result.rows as { tablename: string }[]).map((r) => r.tablename).filter((t) => !t.startsWith('knex_'));
}

describe.each(dbKinds())('migrations on %s', (kind) => {
  it('run all up, all down and all up again', async () => {
    const database = await createTestDatabase(kind);
    const opened = await openDatabase(database.settings);
    try {
      const { db } = opened;
      expect(await tables(db)).toEqual([]);
      await db.migrate.latest(MIGRATION_CONFIG);
      expect(await tables(db)).toEqual(TABLES);
      const indexes = await db.raw("select indexname from pg_indexes where tablename = 'versions' order by indexname");
      expect(indexes.rows.map((r: { indexname: string }) => r.indexname)).toEqual(
        expect.arrayContaining(['versions_one_latest', 'versions_coordinates_unique', 'versions_group_artifact', 'versions_branch_version']),
      );
      const tokenIndexes = await db.raw("select indexname from pg_indexes where tablename = 'tokens' order by indexname");
      expect(tokenIndexes.rows.map((r: { indexname: string }) => r.indexname)).toEqual(
        expect.arrayContaining(['tokens_token_hash_unique', 'tokens_user_name_unique']),
      );
      const cascade = await db.raw(
        "select confdeltype from pg_constraint where conrelid = 'tokens'::regclass and confrelid = 'users'::regclass and contype = 'f'",
      );
      expect(cascade.rows).toEqual([{ confdeltype: 'c' }]);
      await db.migrate.rollback(MIGRATION_CONFIG, true);
      expect(await tables(db)).toEqual([]);
      await db.migrate.latest(MIGRATION_CONFIG);
      expect(await tables(db)).toEqual(TABLES);
      const [, pending] = await db.migrate.list(MIGRATION_CONFIG);
      expect(pending).toEqual([]);
    } finally {
      await opened.close();
      await database.drop();
    }
  });
});
