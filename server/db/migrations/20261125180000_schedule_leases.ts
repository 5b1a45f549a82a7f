// Work on a schedule, claimed through the database: one row per task name, with the instance that
// holds it now, until when (a lease on database time) and when the task is due next.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  const time = (t: Knex.CreateTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  await ensureSchema(
    knex,
    knex.schema.createTable('schedule_leases', (t) => {
      if (mysql) {
        t.charset('utf8mb4');
        t.collate('utf8mb4_bin');
      }
      t.string('name', 100).primary();
      // Host name and pid of the instance running the task; null when no one is.
      t.string('holder', 300).nullable();
      time(t, 'lease_until').nullable();
      time(t, 'next_run_at').notNullable();
      time(t, 'last_run_at').nullable();
    }),
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('schedule_leases');
}
