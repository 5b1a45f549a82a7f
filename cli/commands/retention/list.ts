// `repoadmin retention list`: the retention policies and their rules.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export function retentionListCommand(deps: Deps, run = runRetentionList): Command {
  return new Command('list')
    .summary('list retention policies')
    .usage('[--json]')
    .action(action<object, object>(deps, () => ({}), run));
}

export async function runRetentionList(_opts: object, deps: Pick<Deps, 'api'>): Promise<Report> {
  const answer = await deps.api.listPolicies();
  return {
    json: answer,
    table: {
      head: ['NAME', 'ENABLED', 'PROJECTS', 'BRANCHES', 'PROTECTED', 'KEEP LAST', 'OLDER THAN', 'INACTIVE BRANCH', 'DRY RUN DONE'],
      rows: answer.policies.map((p) => [
        p.name,
        p.enabled,
        p.projects.join(' '),
        p.branches.join(' '),
        p.protectedBranches.join(' '),
        p.keepLast,
        p.olderThanDays === null ? '' : `${p.olderThanDays}d`,
        p.inactiveBranchDays === null ? '' : `${p.inactiveBranchDays}d`,
        p.dryRunDone,
      ]),
    },
    notes: answer.policies.length === 0 ? ['No retention policies.'] : [],
  };
}
