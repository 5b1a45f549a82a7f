// MariaDB and MySQL: the one routine that clears a key's other latest records, called by a latest
// publish and by a restore that takes the key's latest back (server/db/dialects/mysql.ts,
// clearLatest), inside their transaction that holds the key's named lock.
//
// It marks the clearing as the first half of a latest move, not a publish, for the event triggers
// (migration 20261125100000_events), and lifts the mark again, also when its update fails: the mark
// is a session variable, which would otherwise outlive the transaction on a pooled connection.
//
// PostgreSQL and PGlite have theirs already: `versions_take_key` (migration
// 20261123120000_versions_take_key, marked in 20261125100000_events) takes the key's lock and
// clears the key's other latest records; nothing to do there.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

/** The byte-order collation of the versions table's columns, which the routine's parameters take. */
async function versionsCollation(knex: Knex): Promise<string> {
  const [columns] = await knex.raw(
    "select collation_name as name from information_schema.columns where table_schema = database() and table_name = 'versions' and column_name = 'branch'",
  );
  return (columns as { name: string }[])[0]!.name;
}

export async function up(knex: Knex): Promise<void> {
  if (knex.client.dialect !== 'mysql') return;
  const collation = await versionsCollation(knex);
  const text = (length: number) => `varchar(${length}) character set utf8mb4 collate ${collation}`;
  // Dropped first, so that a rerun after a stop between the two statements creates it again.
  await knex.raw('drop procedure if exists versions_clear_latest');
  await ensureSchema(
    knex,
    `create procedure versions_clear_latest(
       key_project ${text(100)}, key_group ${text(100)}, key_artifact ${text(100)}, key_branch ${text(255)},
       kept_version ${text(100)})
     begin
       declare exit handler for sqlexception
       begin
         set @repoadmin_version_change = null;
         resignal;
       end;
       set @repoadmin_version_change = 'latest';
       update versions set latest_version = false, updated_at = current_timestamp(3)
       where project_name = key_project and group_id = key_group and artifact_id = key_artifact
         and branch = key_branch and latest_version and version <> kept_version;
       set @repoadmin_version_change = null;
     end`,
  );
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.dialect !== 'mysql') return;
  await knex.raw('drop procedure if exists versions_clear_latest');
}
