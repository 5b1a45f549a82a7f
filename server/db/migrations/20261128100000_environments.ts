// Environments and promotion (docs/api.md, "Environments and promotion"): each project's ordered
// environments and their gates, the history of promotions, the current version of each artifact in
// each environment, a version's veto, and the token scope `promote`.
//
// - `environments`: per project, in `position` order; `requires`, `soak_minutes` and `protected`
//   are the gates of a promotion into it.
// - `promotions`: every promotion, in commit order by `seq` (promotions of one key into one
//   environment take turns under a lock, so `previous_uid` chains).
// - `environment_current`: one row per (project, environment, group, artifact), the version that is
//   current there: reading "what runs in prod" and "is this record current anywhere" (retention,
//   deletes: the index on `uid`) are index lookups.
// - A veto is three columns of the record (`veto_reason`, `veto_by`, `veto_at`), in `versions` and in
//   `versions_trash` alike, so every read of a record carries it and a delete and restore keep it.
//
// Every step checks what is there first (./index.ts): a start interrupted part-way runs this again.
// Times and collations are written as in the initial migration.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

/** The collation of the versions table's columns (MariaDB, MySQL), which these tables take. */
async function versionsCollation(knex: Knex): Promise<string> {
  const [columns] = await knex.raw(
    "select collation_name as name from information_schema.columns where table_schema = database() and table_name = 'versions' and column_name = 'branch'",
  );
  return (columns as { name: string }[])[0]!.name;
}

/** The scopes a project token may have after this migration. */
const SCOPES = ['publish', 'read', 'delete', 'promote'];
/** ... and before it. */
const SCOPES_BEFORE = ['publish', 'read', 'delete'];

async function setScopes(knex: Knex, mysql: boolean, scopes: string[]): Promise<void> {
  const list = scopes.map((s) => `'${s}'`).join(', ');
  if (mysql) {
    await knex.raw(`alter table tokens modify scope enum(${list}) not null`);
    return;
  }
  // knex writes an enum on PostgreSQL as text with a check constraint named <table>_<column>_check.
  await knex.raw('alter table tokens drop constraint if exists tokens_scope_check');
  await knex.raw(`alter table tokens add constraint tokens_scope_check check (scope in (${list}))`);
}

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  const collation = mysql ? await versionsCollation(knex) : '';
  const time = (t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  const exact = (t: Knex.CreateTableBuilder, name: string, length: number) =>
    mysql ? t.string(name, length) : t.specificType(name, `varchar(${length}) collate "C"`);
  const table = (name: string, build: (t: Knex.CreateTableBuilder) => void) =>
    knex.schema.createTable(name, (t) => {
      if (mysql) {
        t.charset('utf8mb4');
        t.collate(collation);
      }
      build(t);
    });

  await ensureSchema(
    knex,
    table('environments', (t) => {
      exact(t, 'project_name', 100).notNullable();
      exact(t, 'name', 32).notNullable();
      /** The environment's place in its project's order, from 0. */
      t.integer('position').notNullable();
      /** An earlier environment a version must have been current in first. */
      exact(t, 'requires', 32).nullable();
      /** Minutes since the version's first promotion into `requires`. */
      t.integer('soak_minutes').nullable();
      t.boolean('protected').notNullable().defaultTo(false);
      time(t, 'updated_at').notNullable();
      t.primary(['project_name', 'name'], 'environments_pkey');
    }),
    table('promotions', (t) => {
      /** Commit order: promotions of one key into one environment insert it under their lock. */
      t.bigIncrements('seq').primary();
      t.uuid('id').notNullable().unique({ indexName: 'promotions_id_unique' });
      t.uuid('uid').notNullable();
      exact(t, 'project_name', 100).notNullable();
      exact(t, 'environment', 32).notNullable();
      exact(t, 'group_id', 100).notNullable();
      exact(t, 'artifact_id', 100).notNullable();
      exact(t, 'branch', 255).notNullable();
      exact(t, 'version', 100).notNullable();
      t.uuid('previous_uid').nullable();
      exact(t, 'previous_version', 100).nullable();
      t.boolean('rollback').notNullable();
      time(t, 'promoted_at').notNullable();
      t.uuid('promoted_by_user_id').nullable();
      t.string('promoted_by_username', 100).nullable();
      t.uuid('promoted_by_token_id').nullable();
      t.string('comment', 500).nullable();
      t.index(['project_name', 'group_id', 'artifact_id', 'environment', 'seq'], 'promotions_key_seq');
      t.index(['project_name', 'environment', 'seq'], 'promotions_environment_seq');
      /** The gates' question: was this record ever promoted into that environment, and when first. */
      t.index(['uid', 'environment', 'promoted_at'], 'promotions_uid_environment');
    }),
    table('environment_current', (t) => {
      exact(t, 'project_name', 100).notNullable();
      exact(t, 'environment', 32).notNullable();
      exact(t, 'group_id', 100).notNullable();
      exact(t, 'artifact_id', 100).notNullable();
      t.uuid('uid').notNullable();
      exact(t, 'version', 100).notNullable();
      /** The promotion that made it current. */
      t.uuid('promotion_id').notNullable();
      time(t, 'promoted_at').notNullable();
      t.uuid('promoted_by_user_id').nullable();
      t.string('promoted_by_username', 100).nullable();
      t.uuid('promoted_by_token_id').nullable();
      t.primary(['project_name', 'environment', 'group_id', 'artifact_id'], 'environment_current_pkey');
      t.index(['uid'], 'environment_current_uid');
      t.index(['environment', 'group_id', 'artifact_id'], 'environment_current_artifact');
    }),
  );
  for (const records of ['versions', 'versions_trash']) {
    await ensureSchema(
      knex,
      knex.schema.alterTable(records, (t) => {
        t.string('veto_reason', 500).nullable();
      }),
      knex.schema.alterTable(records, (t) => {
        t.string('veto_by', 100).nullable();
      }),
      knex.schema.alterTable(records, (t) => {
        time(t, 'veto_at').nullable();
      }),
    );
  }
  await setScopes(knex, mysql, SCOPES);
}

export async function down(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  // A promote token becomes a read token: it keeps no power it did not have.
  await knex('tokens').where({ scope: 'promote' }).update({ scope: 'read' });
  await setScopes(knex, mysql, SCOPES_BEFORE);
  for (const records of ['versions', 'versions_trash']) {
    for (const column of ['veto_reason', 'veto_by', 'veto_at']) {
      if (await knex.schema.hasColumn(records, column)) await knex.schema.alterTable(records, (t) => t.dropColumn(column));
    }
  }
  await knex.schema.dropTableIfExists('environment_current');
  await knex.schema.dropTableIfExists('promotions');
  await knex.schema.dropTableIfExists('environments');
}
