// `repoadmin retention run`: runs a policy now, or with --dry-run shows what it would delete.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';
import { findPolicy } from './find.js';

export interface RetentionRunOptions {
  name: string;
  dryRun: boolean;
}

export function retentionRunCommand(deps: Deps, run = runRetentionRun): Command {
  return new Command('run')
    .summary('run a policy now; --dry-run shows what it would delete')
    .description('Move what the policy removes to the trash now (at most 10,000 records), or with --dry-run count and show it.\nA run needs a dry run of the current rules first.')
    .usage('<name> [--dry-run]')
    .argument('<name>', 'the policy\'s name')
    .option('--dry-run', 'delete nothing: count and show what would go')
    .addHelpText('after', example('repoadmin retention run features --dry-run', 'repoadmin retention run features'))
    .action(action<{ dryRun?: boolean }, RetentionRunOptions>(deps, (flags, [name]) => ({ name: name!, dryRun: Boolean(flags.dryRun) }), run));
}

export async function runRetentionRun(opts: RetentionRunOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const policy = await findPolicy(deps, opts.name);
  const result = await deps.api.runPolicy(policy.id, opts.dryRun);
  const count = result.dryRun ? `would delete ${result.wouldDelete}` : `deleted ${result.deleted} (into the trash)`;
  const spared = result.keptImmutable > 0 ? ` (${result.keptImmutable} of them immutable versions, which no policy deletes)` : '';
  const shown = result.sample.length < (result.wouldDelete ?? result.deleted ?? 0) ? `; the first ${result.sample.length} shown` : '';
  return {
    json: result,
    table: {
      head: ['PROJECT', 'BRANCH', 'GROUP', 'ARTIFACT', 'VERSION', 'CREATED', 'UID'],
      rows: result.sample.map((r) => [r.projectName, r.branch, r.groupId, r.artifactId, r.version, r.creationDate, r.uid]),
    },
    notes: [`Policy ${policy.name} ${count}, keeps ${result.kept}${spared}${shown}.`],
  };
}
