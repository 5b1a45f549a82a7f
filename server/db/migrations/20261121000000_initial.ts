// The initial schema: users, settings, login attempts and version records.
//
// On MariaDB and MySQL (knex's `mysql` dialect) a few things are written differently, with the same
// meaning: every table uses a binary, no-pad collation (exact, case-sensitive matching and byte
// order, as "C" gives on PostgreSQL); times are DATETIME(3) in UTC (TIMESTAMP ends in 2038); the
// one-latest-per-key rule, a partial unique index on PostgreSQL, is a unique index over a generated
// column that is 1 for a latest record and NULL otherwise (NULLs never clash).
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

/** The byte-order collation of a MariaDB (nopad_bin) or MySQL 8 (0900_bin) server; utf8mb4_bin pads trailing spaces. */
async function binaryCollation(knex: Knex): Promise<string> {
  const [rows] = await knex.raw(
    "select collation_name as name from information_schema.collations where collation_name in ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin')",
  );
  return (rows as { name: string }[])[0]?.name ?? 'utf8mb4_bin';
}

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  const collation = mysql ? await binaryCollation(knex) : '';
  const binaryTable = (t: Knex.CreateTableBuilder) => {
    if (!mysql) return;
    t.charset('utf8mb4');
    t.collate(collation);
  };
  const time = (t: Knex.CreateTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  const now = mysql ? knex.fn.now(3) : knex.fn.now();

  await ensureSchema(
    knex,
    knex.schema.createTable('users', (t) => {
      binaryTable(t);
      t.uuid('id').primary();
      t.string('username', 100).notNullable().unique();
      t.string('password_hash', 100).notNullable();
      t.string('project_name', 100).nullable();
      t.string('role', 20).notNullable();
      t.boolean('must_change_password').notNullable().defaultTo(false);
      t.integer('token_version').notNullable().defaultTo(0);
      time(t, 'created_at').notNullable().defaultTo(now);
      time(t, 'updated_at').notNullable().defaultTo(now);
    }),
  );

  await ensureSchema(
    knex,
    knex.schema.createTable('settings', (t) => {
      binaryTable(t);
      t.string('key', 100).primary();
      t.text('value').notNullable();
    }),
  );

  await ensureSchema(
    knex,
    knex.schema.createTable('login_attempts', (t) => {
      binaryTable(t);
      t.string('scope', 10).notNullable();
      t.string('subject', 255).notNullable();
      t.bigInteger('window_start').notNullable();
      t.integer('failures').notNullable();
      t.primary(['scope', 'subject', 'window_start']);
      t.index(['window_start']);
    }),
  );

  // Text columns that are filtered and sorted use the "C" collation: byte order makes the version
  // key sort as designed, and lets prefix wildcards (com.acme.*) use the indexes.
  const exact = (t: Knex.CreateTableBuilder, name: string, length: number) =>
    mysql ? t.string(name, length) : t.specificType(name, `varchar(${length}) collate "C"`);
  await ensureSchema(
    knex,
    knex.schema.createTable('versions', (t) => {
      binaryTable(t);
      if (mysql) t.bigIncrements('id');
      else t.bigIncrements('id').primary();
      t.uuid('uid').notNullable().unique();
      exact(t, 'project_name', 100).notNullable();
      exact(t, 'branch', 255).notNullable();
      exact(t, 'group_id', 100).notNullable();
      exact(t, 'artifact_id', 100).notNullable();
      exact(t, 'version', 100).notNullable();
      exact(t, 'version_key', 400).notNullable();
      t.string('repository_url', 512).nullable();
      time(t, 'creation_date').notNullable();
      exact(t, 'type', 255).notNullable();
      t.boolean('latest_version').notNullable().defaultTo(false);
      // A description is up to 64 KiB of characters: more bytes than MySQL's TEXT holds.
      if (mysql) t.text('description', 'mediumtext').nullable();
      else t.text('description').nullable();
      time(t, 'created_at').notNullable().defaultTo(now);
      time(t, 'updated_at').notNullable().defaultTo(now);
      t.unique(['project_name', 'branch', 'group_id', 'artifact_id', 'version'], {
        indexName: 'versions_coordinates_unique',
      });
    }),
  );
  // At most one latest record per project, artifact and branch, whatever the code does.
  if (mysql) {
    await ensureSchema(knex, 'alter table versions add column latest_marker tinyint as (case when latest_version then 1 end) stored');
    await ensureSchema(knex, 'create unique index versions_one_latest on versions (group_id, artifact_id, branch, project_name, latest_marker)');
  } else {
    await ensureSchema(knex, 'create unique index versions_one_latest on versions (group_id, artifact_id, branch, project_name) where latest_version');
  }
  await ensureSchema(
    knex,
    'create index versions_group_artifact on versions (group_id, artifact_id, creation_date desc, id desc)',
    'create index versions_branch_version on versions (branch, version_key, creation_date desc, id desc)',
    'create index versions_default_order on versions (creation_date desc, id desc)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('versions');
  await knex.schema.dropTable('login_attempts');
  await knex.schema.dropTable('settings');
  await knex.schema.dropTable('users');
}
