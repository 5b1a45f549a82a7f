// The environments table: each project's environments in order, with the gates of a promotion.
import type { Knex } from 'knex';
import type { EnvironmentSpec } from '../../common/schemas/environments.js';
import type { Db } from './dialects/index.js';
import { toNumber } from './rows.js';

export interface StoredEnvironment {
  projectName: string;
  name: string;
  position: number;
  requires: string | null;
  soakMinutes: number | null;
  protected: boolean;
}

const COLUMNS = ['project_name', 'name', 'position', 'requires', 'soak_minutes', 'protected'];

function fromRow(row: Record<string, unknown>): StoredEnvironment {
  return {
    projectName: String(row.project_name),
    name: String(row.name),
    position: toNumber(row.position),
    requires: (row.requires as string | null) ?? null,
    soakMinutes: row.soak_minutes === null || row.soak_minutes === undefined ? null : toNumber(row.soak_minutes),
    protected: Boolean(row.protected),
  };
}

/** The project's environments, in order. */
export async function listEnvironments(db: Db, projectName: string): Promise<StoredEnvironment[]> {
  return (await db('environments').select(COLUMNS).where({ project_name: projectName }).orderBy('position')).map(fromRow);
}

/**
 * Makes the project's environments these, in this order, in the caller's transaction: the names it
 * no longer lists are gone (what they were is returned), the others are written anew.
 */
export async function replaceEnvironments(trx: Knex.Transaction, projectName: string, specs: EnvironmentSpec[], now: Date): Promise<string[]> {
  const before = (await trx('environments').select('name').where({ project_name: projectName }).forUpdate()).map((r: { name: string }) => r.name);
  const wanted = new Set(specs.map((s) => s.name));
  const removed = before.filter((name) => !wanted.has(name));
  if (removed.length > 0) await trx('environments').where({ project_name: projectName }).whereIn('name', removed).delete();
  for (const [position, spec] of specs.entries()) {
    const row = {
      project_name: projectName,
      name: spec.name,
      position,
      requires: spec.requires ?? null,
      soak_minutes: spec.soakMinutes ?? null,
      protected: spec.protected ?? false,
      updated_at: now,
    };
    await trx('environments').insert(row).onConflict(['project_name', 'name']).merge(['position', 'requires', 'soak_minutes', 'protected', 'updated_at']);
  }
  return removed;
}
