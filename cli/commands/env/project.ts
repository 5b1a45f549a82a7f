// The project a command about environments acts on: --project, else the login's own project.
import { AppError } from '../../../common/errors.js';
import { EnvironmentName } from '../../../common/schemas/repositories.js';
import type { Deps } from '../../deps.js';

export async function projectOf(given: string | undefined, deps: Pick<Deps, 'api'>): Promise<string> {
  if (given !== undefined) return given;
  const own = await deps.api.projectName();
  if (own === null) throw new AppError('usage', 'missing --project (an administrator belongs to no project)');
  return own;
}

/** An environment's name as typed, checked as the server checks it: a usage error (exit 2) naming `what`. */
export function environmentName(name: string, what: string): string {
  const result = EnvironmentName.safeParse(name);
  if (!result.success) throw new AppError('usage', `${what}: the environment's name ${result.error.issues[0]?.message ?? 'is not valid'}, not "${name}"`);
  return name;
}

/** `2026-11-21T10:00:00.000Z` as `2026-11-21 10:00 UTC`: what a table has room for. */
export function shortTime(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}
