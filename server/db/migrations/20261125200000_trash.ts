// Deleting records: the trash, retention policies and their daily runs, and the token scope
// `delete` (which includes publish).
//
// A deleted record moves from `versions` to `versions_trash`, so the hot queries keep reading a
// table that holds only live records. Every step checks what is there first: MariaDB and MySQL
// commit each DDL statement on its own, so a start interrupted half-way runs this again.
// Times and collations are written as in the initial migration.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

/** The collation of a table's column on MariaDB/MySQL, which a copy of it takes. */
async function columnCollation(knex: Knex, table: string, column: string): Promise<string> {
  const [rows] = await knex.raw(
    'select collation_name as name from information_schema.columns where table_schema = database() and table_name = ? and column_name = ?',
    [table, column],
  );
  return (rows as { name: string }[])[0]!.name;
}

async function createTrash(knex: Knex, mysql: boolean, collation: string): Promise<void> {
  const time = (t: Knex.CreateTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  const exact = (t: Knex.CreateTableBuilder, name: string, length: number) =>
    mysql ? t.string(name, length) : t.specificType(name, `varchar(${length}) collate "C"`);
  await ensureSchema(
    knex,
    knex.schema.createTable('versions_trash', (t) => {
    if (mysql) {
      t.charset('utf8mb4');
      t.collate(collation);
    }
    t.bigIncrements('id').primary();
    t.uuid('uid').notNullable().unique({ indexName: 'versions_trash_uid_unique' });
    exact(t, 'project_name', 100).notNullable();
    exact(t, 'branch', 255).notNullable();
    exact(t, 'group_id', 100).notNullable();
    exact(t, 'artifact_id', 100).notNullable();
    exact(t, 'version', 100).notNullable();
    exact(t, 'version_key', 400).notNullable();
    t.string('repository_url', 512).nullable();
    time(t, 'creation_date').notNullable();
    exact(t, 'type', 255).notNullable();
    t.boolean('latest_version').notNullable();
    if (mysql) t.text('description', 'mediumtext').nullable();
    else t.text('description').nullable();
    time(t, 'created_at').notNullable();
    time(t, 'updated_at').notNullable();
    time(t, 'deleted_at').notNullable();
    /** Who deleted it: a user name, or `retention:<policy name>`. */
    t.string('deleted_by', 200).notNullable();
    t.index(['deleted_at'], 'versions_trash_deleted_at');
    t.index(['project_name', 'deleted_at'], 'versions_trash_project_deleted_at');
    }),
  );
}

async function createPolicies(knex: Knex, mysql: boolean, collation: string): Promise<void> {
  const time = (t: Knex.CreateTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  await ensureSchema(
    knex,
    knex.schema.createTable('retention_policies', (t) => {
    if (mysql) {
      t.charset('utf8mb4');
      t.collate(collation);
    }
    t.uuid('id').primary();
    t.string('name', 100).notNullable().unique({ indexName: 'retention_policies_name_unique' });
    /** The rules as JSON (projects, branches, protectedBranches, keepLast, olderThanDays, inactiveBranchDays). */
    t.text('rules').notNullable();
    t.boolean('enabled').notNullable().defaultTo(false);
    /** SHA-256 of the rules of the last dry run: enabling needs it to be the current rules'. */
    t.string('dry_run_hash', 64).nullable();
    time(t, 'created_at').notNullable();
    time(t, 'updated_at').notNullable();
    }),
  );
}

async function createRuns(knex: Knex, mysql: boolean, collation: string): Promise<void> {
  const time = (t: Knex.CreateTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  await ensureSchema(
    knex,
    knex.schema.createTable('retention_runs', (t) => {
    if (mysql) {
      t.charset('utf8mb4');
      t.collate(collation);
    }
    t.bigIncrements('id').primary();
    t.uuid('policy_id').notNullable().references('id').inTable('retention_policies').onDelete('CASCADE');
    /** The UTC day of the scheduled run, YYYY-MM-DD: one run per policy and day. */
    t.string('day', 10).notNullable();
    /** `running` or `finished`. */
    t.string('status', 10).notNullable();
    /** Database time until which the instance that claimed the run owns it. */
    time(t, 'lease_until').notNullable();
    /** A random id of the claim that owns the run now. */
    t.string('claimed_by', 36).notNullable();
    time(t, 'started_at').notNullable();
    time(t, 'finished_at').nullable();
    t.integer('deleted').nullable();
    t.integer('kept').nullable();
    t.unique(['policy_id', 'day'], { indexName: 'retention_runs_policy_day_unique' });
    }),
  );
}

/** The scopes a project token may have after this migration. */
const SCOPES = ['publish', 'read', 'delete'];

async function allowDeleteScope(knex: Knex, mysql: boolean): Promise<void> {
  if (mysql) {
    await knex.raw(`alter table tokens modify scope enum(${SCOPES.map((s) => `'${s}'`).join(', ')}) not null`);
    return;
  }
  // knex writes an enum on PostgreSQL as text with a check constraint named <table>_<column>_check.
  await knex.raw('alter table tokens drop constraint if exists tokens_scope_check');
  await knex.raw(`alter table tokens add constraint tokens_scope_check check (scope in (${SCOPES.map((s) => `'${s}'`).join(', ')}))`);
}

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  const versionsCollation = mysql ? await columnCollation(knex, 'versions', 'branch') : '';
  const usersCollation = mysql ? await columnCollation(knex, 'users', 'id') : '';
  // Each statement on its own (./steps.ts): a rerun adds what an interrupted run left out.
  await createTrash(knex, mysql, versionsCollation);
  await createPolicies(knex, mysql, usersCollation);
  await createRuns(knex, mysql, usersCollation);
  await allowDeleteScope(knex, mysql);
}

export async function down(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  await knex('tokens').where({ scope: 'delete' }).update({ scope: 'publish' });
  if (mysql) {
    await knex.raw("alter table tokens modify scope enum('publish', 'read') not null");
  } else {
    await knex.raw('alter table tokens drop constraint if exists tokens_scope_check');
    await knex.raw("alter table tokens add constraint tokens_scope_check check (scope in ('publish', 'read'))");
  }
  await knex.schema.dropTableIfExists('retention_runs');
  await knex.schema.dropTableIfExists('retention_policies');
  await knex.schema.dropTableIfExists('versions_trash');
}
