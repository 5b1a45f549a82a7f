// PostgreSQL and PGlite: the first step of every publish (server/db/dialects/postgres.ts,
// publishStatement), so that a publish is one statement instead of a transaction of five.
//
// The function takes the transaction-scoped advisory lock of the record's key and, for a latest
// record, clears the key's other latest records. It is VOLATILE: in READ COMMITTED each of its
// statements reads a snapshot taken when it starts, so the UPDATE runs after the lock was granted
// and sees every record the publish before it committed. MariaDB and MySQL keep their transaction
// with a named lock (server/db/dialects/mysql.ts): nothing to do there.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  if (knex.client.dialect === 'mysql') return;
  await knex.raw(`
    create or replace function versions_take_key(
      lock_key text, clear_latest boolean, key_project text, key_group text, key_artifact text,
      key_branch text, kept_version text
    ) returns void language plpgsql volatile as $$
    begin
      perform pg_advisory_xact_lock(hashtext(lock_key));
      if clear_latest then
        update versions set latest_version = false, updated_at = current_timestamp(3)
        where project_name = key_project and group_id = key_group and artifact_id = key_artifact
          and branch = key_branch and latest_version and version <> kept_version;
      end if;
    end
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.dialect === 'mysql') return;
  await knex.raw('drop function versions_take_key(text, boolean, text, text, text, text, text)');
}
