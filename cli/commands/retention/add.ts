// `repoadmin retention add`: makes a retention policy, disabled until a dry run of its rules.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';
import { days } from './find.js';

export interface RetentionAddOptions {
  name: string;
  projects?: string[];
  branches?: string[];
  protectedBranches?: string[];
  keepLast: number;
  olderThanDays?: number;
  inactiveBranchDays?: number;
}

interface AddFlags {
  project?: string[];
  branch?: string[];
  protect?: string[];
  keepLast?: string;
  olderThan?: string;
  inactiveBranch?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function parseAddFlags(flags: AddFlags, name: string): RetentionAddOptions {
  const keepLast = /^\d{1,7}$/.test(flags.keepLast ?? '') ? Number(flags.keepLast) : Number.NaN;
  if (!(keepLast >= 1)) throw new AppError('usage', `--keep-last takes a whole number of 1 or more${flags.keepLast === undefined ? '' : `, not "${flags.keepLast}"`}`);
  return {
    name,
    projects: flags.project,
    branches: flags.branch,
    protectedBranches: flags.protect,
    keepLast,
    olderThanDays: days('--older-than', flags.olderThan),
    inactiveBranchDays: days('--inactive-branch', flags.inactiveBranch),
  };
}

export function retentionAddCommand(deps: Deps, run = runRetentionAdd): Command {
  return new Command('add')
    .summary('make a retention policy (disabled until a dry run)')
    .description(
      'Make a policy: per key (project, branch, group, artifact) keep the --keep-last highest versions and\n' +
        "the latest; beyond them remove what is older than --older-than, and every record of a branch idle\n" +
        'for --inactive-branch. Protected branches (default main, master, release/*) are never touched.',
    )
    .usage('<name> --keep-last N [--project GLOB]... [--branch GLOB]... [--protect GLOB]... [--older-than 30d] [--inactive-branch 90d]')
    .argument('<name>', 'the policy\'s name')
    .option('--project <glob>', 'projects it looks at (repeatable; default *)', collect)
    .option('--branch <glob>', 'branches it looks at (repeatable; default *)', collect)
    .option('--protect <glob>', 'branches it never touches (repeatable; default main, master, release/*)', collect)
    .option('--keep-last <n>', 'versions kept per key, by version order')
    .option('--older-than <days>', 'beyond the kept ones, only records older than this go, e.g. 30d')
    .option('--inactive-branch <days>', 'every record (but the latest) of a branch with no publish for this long goes, e.g. 90d')
    .addHelpText('after', example("repoadmin retention add features --branch 'feature/*' --keep-last 10 --inactive-branch 90d", 'repoadmin retention run features --dry-run'))
    .action(action<AddFlags, RetentionAddOptions>(deps, (flags, [name]) => parseAddFlags(flags, name!), run));
}

export async function runRetentionAdd(opts: RetentionAddOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const { name, projects, branches, protectedBranches, keepLast, olderThanDays, inactiveBranchDays } = opts;
  const policy = await deps.api.createPolicy({ name, projects, branches, protectedBranches, keepLast, olderThanDays, inactiveBranchDays });
  return { json: policy, notes: [`Made the policy ${policy.name} (disabled). See what it would delete: repoadmin retention run ${policy.name} --dry-run`] };
}
