// Trusted publishing (docs/api.md, "Trusted publishing"): pipelines exchange their CI's OpenID
// Connect ID token for a short-lived project token.
// - `trusted_publishers`: per project, the issuer, audience, claims and branches a pipeline's ID
//   token must show; JSON columns as text.
// - `tokens` gain `kind` ('ordinary' or 'oidc'); an oidc token keeps the branch it is bound to (null
//   for a tag build), its publisher, the provenance copied from the verified ID token, and the
//   repository address a publish through it must name (github, gitlab).
// - `used_id_tokens`: each accepted ID token (by `jti`, or a digest of its signature) until its `exp`,
//   so that a replay is refused.
// - `versions.provenance`: what a record published through an oidc token was built by; null otherwise.
//   `versions_trash` keeps it for deleted records.
// Every step checks what is there first (./index.ts): a start interrupted part-way runs this again.
// Times and collations are written as in the initial migration.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

/** The collation of users.id on MariaDB/MySQL (its binary, no-pad one), which the new tables take: tokens join them. */
async function usersCollation(knex: Knex): Promise<string> {
  const [rows] = await knex.raw(
    "select collation_name as name from information_schema.columns where table_schema = database() and table_name = 'users' and column_name = 'id'",
  );
  return (rows as { name: string }[])[0]!.name;
}

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.dialect === 'mysql';
  const collation = mysql ? await usersCollation(knex) : '';
  const time = (t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) =>
    mysql ? t.datetime(name, { precision: 3 }) : t.timestamp(name, { useTz: true, precision: 3 });
  const bin = (t: Knex.CreateTableBuilder) => {
    if (!mysql) return;
    t.charset('utf8mb4');
    t.collate(collation);
  };
  const longText = (t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) => (mysql ? t.text(name, 'mediumtext') : t.text(name));

  await ensureSchema(
    knex,
    knex.schema.createTable('trusted_publishers', (t) => {
      bin(t);
      t.uuid('id').primary();
      t.string('project_name', 100).notNullable();
      t.string('provider', 20).notNullable();
      t.string('issuer', 512).notNullable();
      t.string('audience', 255).notNullable();
      // {claim: exact value or * glob}
      t.text('claims').notNullable();
      // [glob]
      t.text('branches').notNullable();
      // [environment name], or null: no promotion
      t.text('environments').nullable();
      t.string('ref_claim', 100).nullable();
      // A JWK Set given by the administrator (no discovery), or null.
      longText(t, 'jwks').nullable();
      t.text('description').nullable();
      time(t, 'created_at').notNullable();
      time(t, 'updated_at').notNullable();
      t.index(['project_name'], 'trusted_publishers_project');
      t.index(['issuer'], 'trusted_publishers_issuer');
    }),
    knex.schema.createTable('used_id_tokens', (t) => {
      bin(t);
      // Hexadecimal SHA-256 of the issuer and the jti (or of the signature): never the token.
      t.string('token_key', 64).primary();
      time(t, 'expires_at').notNullable();
      t.index(['expires_at'], 'used_id_tokens_expires');
    }),
    knex.schema.alterTable('tokens', (t) => {
      t.string('kind', 10).notNullable().defaultTo('ordinary');
    }),
    knex.schema.alterTable('tokens', (t) => {
      t.string('branch', 255).nullable();
    }),
    knex.schema.alterTable('tokens', (t) => {
      t.uuid('publisher_id').nullable();
    }),
    knex.schema.alterTable('tokens', (t) => {
      t.text('provenance').nullable();
    }),
    knex.schema.alterTable('tokens', (t) => {
      t.string('repository_url', 512).nullable();
    }),
    knex.schema.alterTable('tokens', (t) => {
      t.index(['publisher_id'], 'tokens_publisher');
    }),
    knex.schema.alterTable('versions', (t) => {
      t.text('provenance').nullable();
    }),
    // A deleted record keeps it in the trash, and a restored one has it back.
    knex.schema.alterTable('versions_trash', (t) => {
      t.text('provenance').nullable();
    }),
  );
}

export async function down(knex: Knex): Promise<void> {
  // The oidc tokens cannot outlive their columns: they would become ordinary tokens of no expiry limit.
  await knex('tokens').where({ kind: 'oidc' }).delete();
  const drop = async (table: string, column: string) => {
    if (await knex.schema.hasColumn(table, column)) await knex.schema.alterTable(table, (t) => t.dropColumn(column));
  };
  await drop('versions_trash', 'provenance');
  await drop('versions', 'provenance');
  if (await knex.schema.hasColumn('tokens', 'publisher_id')) {
    await knex.schema.alterTable('tokens', (t) => t.dropIndex(['publisher_id'], 'tokens_publisher'));
  }
  for (const column of ['repository_url', 'provenance', 'publisher_id', 'branch', 'kind']) await drop('tokens', column);
  await knex.schema.dropTableIfExists('used_id_tokens');
  await knex.schema.dropTableIfExists('trusted_publishers');
}
