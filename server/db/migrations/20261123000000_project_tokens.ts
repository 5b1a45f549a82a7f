// Project tokens: long-lived, scoped credentials of a user, kept only as a SHA-256 hash. A token that
// was revoked, or whose user was deleted, leaves its hash in revoked_tokens, so that its next use can
// be told why it fails. On MariaDB and MySQL the tables take the collation of `users` (a foreign key
// needs the same one on both sides) and times are DATETIME(3) in UTC, as in the initial migration.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

/** The collation of users.id on MariaDB/MySQL, which the foreign key to it must match. */
async function usersCollation(knex: Knex): Promise<string> {
  const [rows] = await knex.raw(
    "select collation_name as name from information_schema.columns where table_schema = database() and table_name = 'users' and column_name = 'id'",
  );
  return (rows as { name: string }[])[0]!.name;
}

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  const collation = mysql ? await usersCollation(knex) : '';
  const sameAsUsers = (t: Knex.CreateTableBuilder) => {
    if (!mysql) return;
    t.charset('utf8mb4');
    t.collate(collation);
  };
  const time = (t: Knex.CreateTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });

  await ensureSchema(
    knex,
    knex.schema.createTable('tokens', (t) => {
      sameAsUsers(t);
      t.uuid('id').primary();
      t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
      t.string('name', 100).notNullable();
      t.enu('scope', ['publish', 'read']).notNullable();
      // Lowercase hexadecimal SHA-256 of the whole token; never the token.
      t.string('token_hash', 64).notNullable().unique({ indexName: 'tokens_token_hash_unique' });
      time(t, 'created_at').notNullable();
      time(t, 'expires_at').nullable();
      time(t, 'last_used_at').nullable();
      t.unique(['user_id', 'name'], { indexName: 'tokens_user_name_unique' });
    }),
  );

  await ensureSchema(
    knex,
    knex.schema.createTable('revoked_tokens', (t) => {
      sameAsUsers(t);
      t.string('token_hash', 64).primary();
      // 'revoked' (DELETE /v1/tokens/{id}) or 'user_deleted'.
      t.string('reason', 20).notNullable();
      time(t, 'revoked_at').notNullable();
    }),
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('revoked_tokens');
  await knex.schema.dropTable('tokens');
}
