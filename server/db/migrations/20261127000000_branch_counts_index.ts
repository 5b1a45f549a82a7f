// PostgreSQL: the counts index of a branch carries the counts, as on MariaDB/MySQL (migration
// 20261121120000_version_counts), so a branch-wide search's total is read from the index alone.
//
// With the index on `branch` only, the total of a search by branch fetched each of the branch's
// summary rows (4,000 at a million records) from the table. Every publish and every delete rewrites
// one of those rows, mostly into another page, so they end up spread over many pages, and more so the
// more records were published and deleted: 341 pages after 1.1 million publishes and 100,000 deletes
// against 198 after a million publishes (bench/results/2026-11-27-trash.md), and the branch-wide
// search 112% as slow. From the index, once VACUUM has marked the pages all-visible, the same total
// reads 10 to 31 pages.
import type { Knex } from 'knex';
import { ensureSchema } from './steps.js';

export async function up(knex: Knex): Promise<void> {
  if (knex.client.dialect === 'mysql') return;
  await ensureSchema(knex, 'create index version_counts_branch_records on version_counts (branch, records)');
  await knex.raw('drop index if exists version_counts_branch');
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.dialect === 'mysql') return;
  await ensureSchema(knex, 'create index version_counts_branch on version_counts (branch)');
  await knex.raw('drop index if exists version_counts_branch_records');
}
