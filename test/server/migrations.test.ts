// Migrations: all up, all down, all up again, on an empty database of each kind.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/connect.js';
import { MIGRATION_CONFIG } from '../../server/db/migrations/index.js';
import type { DbKind } from '../../server/config.js';
import { createTestDatabase, dbKinds } from '../helpers/db.js';

const TABLES = ['audit', 'deliveries', 'event_sequence', 'events', 'latest_keys', 'login_attempts', 'retention_policies', 'retention_runs', 'revoked_tokens', 'settings', 'tokens', 'users', 'version_counts', 'versions', 'versions_trash', 'webhooks'];

type Db = Awaited<ReturnType<typeof openDatabase>>['db'];

/** Names from the catalogue: PostgreSQL's, or MariaDB/MySQL's information_schema. */
async function names(db: Db, kind: DbKind, postgres: string, mysql: string): Promise<string[]> {
  if (kind === 'mysql') {
    const [rows] = await db.raw(mysql);
    return (rows as { name: string }[]).map((r) => r.name);
  }
  return ((await db.raw(postgres)).rows as { name: string }[]).map((r) => r.name);
}

async function tables(db: Db, kind: DbKind): Promise<string[]> {
  const all = await names(
    db,
    kind,
    "select tablename as name from pg_tables where schemaname = 'public' order by tablename",
    'select table_name as name from information_schema.tables where table_schema = database() order by table_name',
  );
  return all.filter((t) => !t.startsWith('knex_')).sort();
}

function versionIndexes(db: Db, kind: DbKind): Promise<string[]> {
  return names(
    db,
    kind,
    "select indexname as name from pg_indexes where tablename = 'versions' order by indexname",
    "select distinct index_name as name from information_schema.statistics where table_schema = database() and table_name = 'versions' order by index_name",
  );
}

describe.each(dbKinds())('migrations on %s', (kind) => {
  it('run all up, all down and all up again', async () => {
    const database = await createTestDatabase(kind);
    const opened = await openDatabase(database.settings);
    try {
      const { db } = opened;
      expect(await tables(db, kind)).toEqual([]);
      await db.migrate.latest(MIGRATION_CONFIG);
      expect(await tables(db, kind)).toEqual(TABLES);
      expect(await versionIndexes(db, kind)).toEqual(
        expect.arrayContaining(['versions_one_latest', 'versions_coordinates_unique', 'versions_group_artifact', 'versions_branch_version']),
      );
      if (kind === 'mysql') {
        // Exact, case-sensitive matching and byte order: a binary collation on every text column.
        const collations = await names(
          db,
          kind,
          '',
          "select distinct collation_name as name from information_schema.columns where table_schema = database() and table_name not like 'knex\\_%' and collation_name is not null",
        );
        expect(collations.filter((c) => !/_bin$/.test(c))).toEqual([]);
      }
      expect(
        await names(
          db,
          kind,
          "select indexname as name from pg_indexes where tablename = 'tokens' order by indexname",
          "select distinct index_name as name from information_schema.statistics where table_schema = database() and table_name = 'tokens' order by index_name",
        ),
      ).toEqual(expect.arrayContaining(['tokens_token_hash_unique', 'tokens_user_name_unique']));
      // Deleting a user deletes its tokens: the foreign key cascades.
      expect(
        await names(
          db,
          kind,
          "select confdeltype::text as name from pg_constraint where conrelid = 'tokens'::regclass and confrelid = 'users'::regclass and contype = 'f'",
          "select delete_rule as name from information_schema.referential_constraints where constraint_schema = database() and table_name = 'tokens' and referenced_table_name = 'users'",
        ),
      ).toEqual([kind === 'mysql' ? 'CASCADE' : 'c']);
      await db.migrate.rollback(MIGRATION_CONFIG, true);
      expect(await tables(db, kind)).toEqual([]);
      await db.migrate.latest(MIGRATION_CONFIG);
      expect(await tables(db, kind)).toEqual(TABLES);
      const [, pending] = await db.migrate.list(MIGRATION_CONFIG);
      expect(pending).toEqual([]);
    } finally {
      await opened.close();
      await database.drop();
    }
  });
});
