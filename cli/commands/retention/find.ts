// A retention policy named on the command line, found by its name (or id).
import { AppError } from '../../../common/errors.js';
import type { RetentionPolicy } from '../../../common/schemas/retention.js';
import type { Deps } from '../../deps.js';

export async function findPolicy(deps: Pick<Deps, 'api'>, name: string): Promise<RetentionPolicy> {
  const { policies } = await deps.api.listPolicies();
  const found = policies.find((p) => p.name === name || p.id === name.toLowerCase());
  if (!found) throw new AppError('not_found', `no retention policy named ${name}: see repoadmin retention list`);
  return found;
}

/** `30d` or `30`: a number of days. */
export function days(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,5})d?$/.exec(value);
  if (!m || Number(m[1]) < 1) throw new AppError('usage', `${flag} takes a number of days, e.g. 30d, not "${value}"`);
  return Number(m[1]);
}
