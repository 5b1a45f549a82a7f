// The initial schema: users, settings, login attempts and version records.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary();
    t.string('username', 100).notNullable().unique();
    t.string('password_hash', 100).notNullable();
    t.string('project_name', 100).nullable();
    t.string('role', 20).notNullable();
    t.boolean('must_change_password').notNullable().defaultTo(false);
    t.integer('token_version').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('settings', (t) => {
    t.string('key', 100).primary();
    t.text('value').notNullable();
  });

  await knex.schema.createTable('login_attempts', (t) => {
    t.string('scope', 10).notNullable();
    t.string('subject', 255).notNullable();
    t.bigInteger('window_start').notNullable();
    t.integer('failures').notNullable();
    t.primary(['scope', 'subject', 'window_start']);
    t.index(['window_start']);
  });

  // Text columns that are filtered and sorted use the "C" collation: byte order makes the version
  // key sort as designed, and lets prefix wildcards (com.acme.*) use the indexes.
  await knex.schema.createTable('versions', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('uid').notNullable().unique();
    t.specificType('project_name', 'varchar(100) collate "C"').notNullable();
    t.specificType('branch', 'varchar(255) collate "C"').notNullable();
    t.specificType('group_id', 'varchar(100) collate "C"').notNullable();
    t.specificType('artifact_id', 'varchar(100) collate "C"').notNullable();
    t.specificType('version', 'varchar(100) collate "C"').notNullable();
    t.specificType('version_key', 'varchar(400) collate "C"').notNullable();
    t.string('repository_url', 512).nullable();
    t.timestamp('creation_date', { useTz: true, precision: 3 }).notNullable();
    t.specificType('type', 'varchar(255) collate "C"').notNullable();
    t.boolean('latest_version').notNullable().defaultTo(false);
    t.text('description').nullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.unique(['project_name', 'branch', 'group_id', 'artifact_id', 'version'], {
      indexName: 'versions_coordinates_unique',
    });
  });
  // At most one latest record per project, artifact and branch, whatever the code does.
  await knex.raw(
    'create unique index versions_one_latest on versions (group_id, artifact_id, branch, project_name) where latest_version',
  );
  await knex.raw('create index versions_group_artifact on versions (group_id, artifact_id, creation_date desc, id desc)');
  await knex.raw('create index versions_branch_version on versions (branch, version_key, creation_date desc, id desc)');
  await knex.raw('create index versions_default_order on versions (creation_date desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('versions');
  await knex.schema.dropTable('login_attempts');
  await knex.schema.dropTable('settings');
  await knex.schema.dropTable('users');
}
