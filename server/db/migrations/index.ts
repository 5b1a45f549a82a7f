// The migrations, in order. Listed in code (not read from a folder) so they work inside the bundle.
import type { Knex } from 'knex';
import * as initial from './20261121000000_initial.js';
import * as versionCounts from './20261121120000_version_counts.js';
import * as projectTokens from './20261123000000_project_tokens.js';
import * as versionsTakeKey from './20261123120000_versions_take_key.js';
import * as events from './20261125100000_events.js';
import * as trash from './20261125200000_trash.js';

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
  '20261125200000_trash': trash,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name]!,
};

export const MIGRATION_CONFIG = { migrationSource, tableName: 'knex_migrations' };
