// Events, webhooks, their deliveries and the audit log (docs/webhooks.md).
//
// Events are written by triggers on the versions table, so every code path that changes a record
// (the checked one-statement publish, the plain one, MariaDB's transaction, a bulk load) writes its
// event in the same transaction: a rolled-back change leaves none, a committed one loses none.
// What kind of change a row change is comes from a per-transaction marker the writer may set
// (server/db/events.ts, markVersionChange): none is a publish; `latest` moves only the latest flag
// (the key's old latest stops being latest and another takes over in the same transaction, so one
// `latest.moved` says from and to); `restore` puts a record back from the trash; `quiet` writes no
// event (bulk seeding). A delete is always `version.deleted`.
//
// `latest_keys` holds each key's latest version and the `seq` of its last `latest.moved`, so the
// sequence is gapless per key and from/to chain.
//
// Every step checks what is already there: MariaDB and MySQL commit each DDL statement on its own,
// so an interrupted run must be safe to run again.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

const KEY = ['project_name', 'branch', 'group_id', 'artifact_id'];
const RECORD = ['uid', 'project_name', 'branch', 'group_id', 'artifact_id', 'version', 'repository_url', 'creation_date', 'type', 'latest_version', 'description'];

/** The byte-order collation of the versions table's columns (MariaDB, MySQL). */
async function versionsCollation(knex: Knex): Promise<string> {
  const [columns] = await knex.raw(
    "select collation_name as name from information_schema.columns where table_schema = database() and table_name = 'versions' and column_name = 'branch'",
  );
  return (columns as { name: string }[])[0]!.name;
}

async function createTables(knex: Knex, collation: string): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  const time = (t: Knex.CreateTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  const now = knex.fn.now(3);
  const keyColumn = (t: Knex.CreateTableBuilder, name: string, length: number) =>
    mysql ? t.string(name, length) : t.specificType(name, `varchar(${length}) collate "C"`);
  // Each statement of a table on its own (./steps.ts): a rerun adds the indexes an interrupted run left out.
  const table = async (name: string, build: (t: Knex.CreateTableBuilder) => void) => {
    await ensureSchema(knex, knex.schema.createTable(name, (t) => {
      if (mysql) {
        t.charset('utf8mb4');
        t.collate(collation);
      }
      build(t);
    }));
  };

  await table('events', (t) => {
    t.bigIncrements('id');
    // The commit-order cursor, assigned after commit (server/db/events.ts, sequenceEvents).
    t.bigInteger('seq').nullable().unique();
    t.string('type', 40).notNullable();
    t.string('project_name', 100).nullable();
    if (mysql) t.text('data', 'mediumtext').notNullable();
    else t.text('data').notNullable();
    time(t, 'created_at').notNullable().defaultTo(now);
    t.index(['created_at']);
  });
  // Unsequenced events are found through this index (NULLs first on MariaDB).
  if (!mysql) await knex.raw('create index if not exists events_unsequenced on events (id) where seq is null');

  await table('event_sequence', (t) => {
    t.string('name', 20).primary();
    t.bigInteger('last_seq').notNullable();
  });
  if (!(await knex('event_sequence').where({ name: 'events' }).first())) {
    await knex('event_sequence').insert({ name: 'events', last_seq: 0 });
  }

  await table('latest_keys', (t) => {
    keyColumn(t, 'project_name', 100).notNullable();
    keyColumn(t, 'branch', 255).notNullable();
    keyColumn(t, 'group_id', 100).notNullable();
    keyColumn(t, 'artifact_id', 100).notNullable();
    t.string('version', 255).nullable();
    t.bigInteger('seq').notNullable();
    t.primary(KEY);
  });

  await table('webhooks', (t) => {
    t.uuid('id').primary();
    t.string('url', 2048).notNullable();
    t.text('events').notNullable();
    t.text('projects').nullable();
    t.string('description', 500).nullable();
    t.boolean('active').notNullable();
    t.string('secret', 100).notNullable();
    t.string('previous_secret', 100).nullable();
    time(t, 'previous_secret_until').nullable();
    t.integer('failures_in_row').notNullable().defaultTo(0);
    time(t, 'last_success_at').nullable();
    t.string('disabled_reason', 500).nullable();
    time(t, 'created_at').notNullable().defaultTo(now);
    time(t, 'updated_at').notNullable().defaultTo(now);
  });

  await table('deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('webhook_id').notNullable().references('id').inTable('webhooks').onDelete('CASCADE');
    t.bigInteger('event_id').nullable();
    // The event's commit-order position: a webhook's deliveries go out in this order.
    t.bigInteger('event_seq').nullable();
    t.string('type', 40).notNullable();
    if (mysql) t.text('body', 'mediumtext').notNullable();
    else t.text('body').notNullable();
    t.string('status', 10).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('last_status').nullable();
    t.string('last_error', 500).nullable();
    time(t, 'last_attempt_at').nullable();
    time(t, 'next_attempt_at').nullable();
    t.integer('duration_ms').nullable();
    time(t, 'lease_until').nullable();
    t.uuid('lease_token').nullable();
    time(t, 'created_at').notNullable().defaultTo(now);
    time(t, 'updated_at').notNullable().defaultTo(now);
    t.index(['webhook_id', 'status', 'event_seq'], 'deliveries_webhook_status');
    t.index(['status', 'next_attempt_at'], 'deliveries_due');
    t.index(['updated_at'], 'deliveries_updated');
  });

  await table('audit', (t) => {
    t.bigIncrements('id');
    time(t, 'at').notNullable().defaultTo(now);
    t.uuid('user_id').nullable();
    t.string('username', 100).nullable();
    t.uuid('token_id').nullable();
    t.string('via', 10).nullable();
    t.string('action', 40).notNullable();
    t.string('target', 500).nullable();
    t.string('outcome', 10).notNullable();
    t.string('address', 100).nullable();
    t.string('request_id', 100).nullable();
    t.text('details').nullable();
    t.index(['at'], 'audit_at');
    t.index(['action', 'at'], 'audit_action');
    t.index(['username', 'at'], 'audit_username');
  });
}

/** PostgreSQL and PGlite: the trigger function, the latest bookkeeping, and versions_take_key marking its clearing. */
async function upPostgres(knex: Knex): Promise<void> {
  const record = (row: 'old' | 'new') => `json_build_object(${RECORD.map((c) => `'${c}', ${row}.${c}`).join(', ')})`;
  const keyOf = (row: 'old' | 'new') => KEY.map((c) => `${row}.${c}`).join(', ');
  const keyMatch = KEY.map((c, i) => `${c} = k${i}`).join(' and ');
  await knex.raw(`
    create or replace function events_latest_moved(k0 text, k1 text, k2 text, k3 text, moved_to text) returns void
    language plpgsql as $$
    declare
      previous text;
      last_seq bigint;
    begin
      insert into latest_keys (${KEY.join(', ')}, version, seq) values (k0, k1, k2, k3, null, 0) on conflict do nothing;
      select version, seq into previous, last_seq from latest_keys where ${keyMatch} for update;
      if previous is not distinct from moved_to then
        return;
      end if;
      update latest_keys set version = moved_to, seq = last_seq + 1 where ${keyMatch};
      insert into events (type, project_name, data) values ('latest.moved', k0, json_build_object(
        'projectName', k0, 'branch', k1, 'groupId', k2, 'artifactId', k3, 'from', previous, 'to', moved_to, 'seq', last_seq + 1)::text);
    end
    $$`);
  await knex.raw(`
    create or replace function versions_events() returns trigger language plpgsql as $$
    declare
      change text := coalesce(current_setting('repoadmin.version_change', true), '');
    begin
      if change = 'quiet' then
        return null;
      end if;
      if tg_op = 'DELETE' then
        insert into events (type, project_name, data)
        values ('version.deleted', old.project_name, json_build_object('record', ${record('old')})::text);
        if old.latest_version and change <> 'latest' then
          perform events_latest_moved(${keyOf('old')}, null);
        end if;
        return null;
      end if;
      if tg_op = 'INSERT' then
        insert into events (type, project_name, data)
        values (case when change = 'restore' then 'version.restored' else 'version.published' end, new.project_name,
                json_build_object('record', ${record('new')}, 'created', true)::text);
      elsif change <> 'latest' then
        insert into events (type, project_name, data)
        values ('version.published', new.project_name, json_build_object('record', ${record('new')}, 'created', false)::text);
      end if;
      if new.latest_version and (tg_op = 'INSERT' or not old.latest_version) then
        perform events_latest_moved(${keyOf('new')}, new.version);
      elsif tg_op = 'UPDATE' and old.latest_version and not new.latest_version and change <> 'latest' then
        perform events_latest_moved(${keyOf('new')}, null);
      end if;
      return null;
    end
    $$`);
  await knex.raw('drop trigger if exists versions_events on versions');
  await knex.raw('create trigger versions_events after insert or delete or update on versions for each row execute function versions_events()');
  // The clearing of a key's other latest records is the first half of a move, not a publish.
  await knex.raw(`
    create or replace function versions_take_key(
      lock_key text, clear_latest boolean, key_project text, key_group text, key_artifact text,
      key_branch text, kept_version text
    ) returns void language plpgsql volatile as $$
    begin
      perform pg_advisory_xact_lock(hashtext(lock_key));
      if clear_latest then
        perform set_config('repoadmin.version_change', 'latest', true);
        update versions set latest_version = false, updated_at = current_timestamp(3)
        where project_name = key_project and group_id = key_group and artifact_id = key_artifact
          and branch = key_branch and latest_version and version <> kept_version;
        perform set_config('repoadmin.version_change', '', true);
      end if;
    end
    $$`);
}

/** MariaDB and MySQL: one trigger per kind of row change, sharing a procedure for the latest bookkeeping. */
async function upMysql(knex: Knex, collation: string): Promise<void> {
  const text = (length: number) => `varchar(${length}) character set utf8mb4 collate ${collation}`;
  const record = (row: 'old' | 'new') =>
    `json_object(${RECORD.map((c) =>
      c === 'creation_date'
        ? `'${c}', date_format(${row}.${c}, '%Y-%m-%dT%H:%i:%s.%fZ')`
        : c === 'latest_version'
          ? `'${c}', ${row}.${c} <> 0`
          : `'${c}', ${row}.${c}`,
    ).join(', ')})`;
  const keyOf = (row: 'old' | 'new') => KEY.map((c) => `${row}.${c}`).join(', ');
  const keyMatch = KEY.map((c, i) => `${c} = k${i}`).join(' and ');
  const change = "coalesce(@repoadmin_version_change, '')";
  await knex.raw('drop procedure if exists events_latest_moved');
  await knex.raw(`
    create procedure events_latest_moved(k0 ${text(100)}, k1 ${text(255)}, k2 ${text(100)}, k3 ${text(100)}, moved_to ${text(255)})
    begin
      declare previous ${text(255)};
      declare last_seq bigint;
      insert into latest_keys (${KEY.join(', ')}, version, seq) values (k0, k1, k2, k3, null, 0) on duplicate key update seq = seq;
      select version, seq into previous, last_seq from latest_keys where ${keyMatch} for update;
      if not (previous <=> moved_to) then
        update latest_keys set version = moved_to, seq = last_seq + 1 where ${keyMatch};
        insert into events (type, project_name, data) values ('latest.moved', k0, json_object(
          'projectName', k0, 'branch', k1, 'groupId', k2, 'artifactId', k3, 'from', previous, 'to', moved_to, 'seq', last_seq + 1));
      end if;
    end`);
  for (const event of ['insert', 'update', 'delete']) await knex.raw(`drop trigger if exists versions_events_${event}`);
  await knex.raw(`
    create trigger versions_events_insert after insert on versions for each row
    begin
      if ${change} <> 'quiet' then
        insert into events (type, project_name, data)
        values (if(${change} = 'restore', 'version.restored', 'version.published'), new.project_name,
                json_object('record', ${record('new')}, 'created', true));
        if new.latest_version then
          call events_latest_moved(${keyOf('new')}, new.version);
        end if;
      end if;
    end`);
  await knex.raw(`
    create trigger versions_events_update after update on versions for each row
    begin
      if ${change} <> 'quiet' then
        if ${change} <> 'latest' then
          insert into events (type, project_name, data)
          values ('version.published', new.project_name, json_object('record', ${record('new')}, 'created', false));
        end if;
        if new.latest_version and not old.latest_version then
          call events_latest_moved(${keyOf('new')}, new.version);
        elseif old.latest_version and not new.latest_version and ${change} <> 'latest' then
          call events_latest_moved(${keyOf('new')}, null);
        end if;
      end if;
    end`);
  await knex.raw(`
    create trigger versions_events_delete after delete on versions for each row
    begin
      if ${change} <> 'quiet' then
        insert into events (type, project_name, data)
        values ('version.deleted', old.project_name, json_object('record', ${record('old')}));
        if old.latest_version and ${change} <> 'latest' then
          call events_latest_moved(${keyOf('old')}, null);
        end if;
      end if;
    end`);
}

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  const collation = mysql ? await versionsCollation(knex) : '';
  await createTables(knex, collation);
  // Each key's current latest, so the first move after this migration names where it came from.
  await knex.raw(
    `insert into latest_keys (${KEY.join(', ')}, version, seq)
     select ${KEY.join(', ')}, max(version), 0 from versions v where latest_version
       and not exists (select 1 from latest_keys k where ${KEY.map((c) => `k.${c} = v.${c}`).join(' and ')})
     group by ${KEY.join(', ')}`,
  );
  if (mysql) await upMysql(knex, collation);
  else await upPostgres(knex);
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.dialect === 'mysql') {
    for (const event of ['insert', 'update', 'delete']) await knex.raw(`drop trigger if exists versions_events_${event}`);
    await knex.raw('drop procedure if exists events_latest_moved');
  } else {
    await knex.raw('drop trigger if exists versions_events on versions');
    await knex.raw('drop function if exists versions_events()');
    await knex.raw('drop function if exists events_latest_moved(text, text, text, text, text)');
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
  for (const table of ['audit', 'deliveries', 'webhooks', 'latest_keys', 'event_sequence', 'events']) {
    await knex.schema.dropTableIfExists(table);
  }
}
