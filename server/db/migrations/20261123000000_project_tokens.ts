// Project tokens: long-lived, scoped credentials of a user, kept only as a SHA-256 hash. A token that
// was revoked, or whose user was deleted, leaves its hash in revoked_tokens, so that its next use can
// be told why it fails. Plain knex schema calls only: the same on every database kind.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tokens', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.enu('scope', ['publish', 'read']).notNullable();
    // Lowercase hexadecimal SHA-256 of the whole token; never the token.
    t.string('token_hash', 64).notNullable().unique({ indexName: 'tokens_token_hash_unique' });
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 3 }).nullable();
    t.timestamp('last_used_at', { useTz: true, precision: 3 }).nullable();
    t.unique(['user_id', 'name'], { indexName: 'tokens_user_name_unique' });
  });

  await knex.schema.createTable('revoked_tokens', (t) => {
    t.string('token_hash', 64).primary();
    // 'revoked' (DELETE /v1/tokens/{id}) or 'user_deleted'.
    t.string('reason', 20).notNullable();
    t.timestamp('revoked_at', { useTz: true, precision: 3 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('revoked_tokens');
  await knex.schema.dropTable('tokens');
}
