// Immutable versions keep their content after their record is gone
// (docs/retention.md, "Immutable versions"): `immutable_versions` holds, per coordinates, the content of a record of an immutable
// version that was deleted (repository address, creation date, type, description), so that a later
// publish or restore with other content is refused even once the trash was emptied.
//
// PostgreSQL and PGlite: `versions_stored_content` is the first step of an immutable version's
// publish statement (server/db/dialects/postgres.ts). It takes the key's lock, as
// versions_take_key (migration 20261123120000_versions_take_key) does, and then reads the record
// stored under the coordinates, or else their kept content. It is VOLATILE, so its reads take a
// snapshot after the lock was granted and see what the publish or delete before it committed.
// MariaDB and MySQL read the same in their publish transaction, under the key's named lock.
//
// The records in the trash when this runs keep their content too (the earliest published of each
// coordinates): which versions are immutable is the server's setting, which a migration cannot
// know, and kept content is only ever compared for versions that are immutable at the time.
// Every step checks what is there first (./index.ts): a start interrupted part-way runs this again.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

const COORDINATES = ['project_name', 'branch', 'group_id', 'artifact_id', 'version'];
const CONTENT = ['repository_url', 'creation_date', 'type', 'description'];

/** The collation of the versions table's columns (MariaDB, MySQL), which this table takes. */
async function versionsCollation(knex: Knex): Promise<string> {
  const [columns] = await knex.raw(
    "select collation_name as name from information_schema.columns where table_schema = database() and table_name = 'versions' and column_name = 'branch'",
  );
  return (columns as { name: string }[])[0]!.name;
}

async function createTable(knex: Knex, mysql: boolean): Promise<void> {
  const collation = mysql ? await versionsCollation(knex) : '';
  const time = (t: Knex.CreateTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  const exact = (t: Knex.CreateTableBuilder, name: string, length: number) =>
    mysql ? t.string(name, length) : t.specificType(name, `varchar(${length}) collate "C"`);
  await ensureSchema(
    knex,
    knex.schema.createTable('immutable_versions', (t) => {
      if (mysql) {
        t.charset('utf8mb4');
        t.collate(collation);
      }
      exact(t, 'project_name', 100).notNullable();
      exact(t, 'branch', 255).notNullable();
      exact(t, 'group_id', 100).notNullable();
      exact(t, 'artifact_id', 100).notNullable();
      exact(t, 'version', 100).notNullable();
      t.string('repository_url', 512).nullable();
      time(t, 'creation_date').notNullable();
      exact(t, 'type', 255).notNullable();
      if (mysql) t.text('description', 'mediumtext').nullable();
      else t.text('description').nullable();
      /** The uid of the record the content was kept from. */
      t.uuid('uid').notNullable();
      time(t, 'kept_at').notNullable();
      t.primary(COORDINATES, 'immutable_versions_pkey');
    }),
  );
}

/** The content of the trash's records, the earliest published of each coordinates; again: nothing new. */
async function keepTrashed(knex: Knex, mysql: boolean): Promise<void> {
  const columns = [...COORDINATES, ...CONTENT, 'uid'];
  const same = COORDINATES.map((c) => `o.${c} = t.${c}`).join(' and ');
  const select = `select ${columns.map((c) => `t.${c}`).join(', ')}, t.deleted_at from versions_trash t
    where not exists (select 1 from versions_trash o where ${same} and (o.created_at < t.created_at or (o.created_at = t.created_at and o.id < t.id)))`;
  const insert = `insert into immutable_versions (${columns.join(', ')}, kept_at) ${select}`;
  await knex.raw(mysql ? `${insert} on duplicate key update uid = immutable_versions.uid` : `${insert} on conflict do nothing`);
}

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  await createTable(knex, mysql);
  await keepTrashed(knex, mysql);
  if (mysql) return;
  await knex.raw(`
    create or replace function versions_stored_content(
      lock_key text, key_project text, key_group text, key_artifact text, key_branch text, key_version text
    ) returns table (repository_url varchar, creation_date timestamptz, type varchar, description text)
    language plpgsql volatile as $$
    #variable_conflict use_column
    begin
      perform pg_advisory_xact_lock(hashtext(lock_key));
      return query select v.repository_url::varchar, v.creation_date, v.type::varchar, v.description from versions v
        where v.project_name = key_project and v.branch = key_branch and v.group_id = key_group
          and v.artifact_id = key_artifact and v.version = key_version;
      if found then
        return;
      end if;
      return query select k.repository_url::varchar, k.creation_date, k.type::varchar, k.description from immutable_versions k
        where k.project_name = key_project and k.branch = key_branch and k.group_id = key_group
          and k.artifact_id = key_artifact and k.version = key_version;
    end
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.dialect !== 'mysql') await knex.raw('drop function if exists versions_stored_content(text, text, text, text, text, text)');
  await knex.schema.dropTableIfExists('immutable_versions');
}
