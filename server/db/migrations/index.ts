// The migrations, in order. Listed in code (not read from a folder) so they work inside the bundle.
//
// Every migration must be safe to run again from any point: MariaDB and MySQL commit each DDL
// statement on its own, so a start stopped in the middle (kill -9, SIGTERM, a lost connection)
// leaves part of a migration done and unrecorded, and the next start runs all of it again.
// - Schema changes go through `ensureSchema(knex, ...steps)` (./steps.ts): knex schema builders or
//   SQL strings, run one statement at a time; a table, column, index, constraint, trigger or function
//   that is already there counts as done. Never `knex.schema.createTable(...)` or `knex.raw('create
//   ...')` on their own.
// - Data statements give the same result when run twice: `insert ... on conflict do nothing` (or `do
//   update` with the computed value; `on duplicate key update` on MySQL), never `count + 1`.
// - Functions and views: `create or replace`. Each migration is listed below and imports no
//   application code. test/server/migrations.test.ts stops every migration after each of its
//   statements and checks that the next run completes it.
import type { Knex } from 'knex';
import * as initial from './20261121000000_initial.js';
import * as versionCounts from './20261121120000_version_counts.js';
import * as projectTokens from './20261123000000_project_tokens.js';
import * as versionsTakeKey from './20261123120000_versions_take_key.js';
import * as events from './20261125100000_events.js';
import * as scheduleLeases from './20261125180000_schedule_leases.js';
import * as trash from './20261125200000_trash.js';
import * as immutableVersions from './20261127000000_immutable_versions.js';
import * as trustedPublishing from './20261128000000_trusted_publishing.js';
import * as environments from './20261128100000_environments.js';
import * as versionsClearLatest from './20261128120000_versions_clear_latest.js';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const MIGRATIONS: Record<string, Migration> = {
  '20261121000000_initial': initial,
  '20261121120000_version_counts': versionCounts,
  '20261123000000_project_tokens': projectTokens,
  '20261123120000_versions_take_key': versionsTakeKey,
  '20261125100000_events': events,
  '20261125180000_schedule_leases': scheduleLeases,
  '20261125200000_trash': trash,
  '20261127000000_immutable_versions': immutableVersions,
  '20261128000000_trusted_publishing': trustedPublishing,
  '20261128100000_environments': environments,
  '20261128120000_versions_clear_latest': versionsClearLatest,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name]!,
};

export const MIGRATION_CONFIG = { migrationSource, tableName: 'knex_migrations' };
