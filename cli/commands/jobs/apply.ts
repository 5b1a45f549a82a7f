// `repoadmin jobs apply [file]`: carries the plan out; deletions need a confirmation or --yes.
// Exit 1 when any item failed or was refused; --dry-run is `jobs diff`.
import type { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { canPrompt, type Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { executePlan } from '../../jenkins/execute.js';
import { applyReport, planLine, resultLine } from '../../jenkins/report.js';
import { action } from '../support.js';
import { applyFailure, diffOutcome, planSyncOptions, syncCommand, syncOptions, type SyncFlags, type SyncOptions } from './shared.js';

export interface ApplyOptions extends SyncOptions {
  dryRun: boolean;
  yes: boolean;
}

type ApplyFlags = SyncFlags & { dryRun?: boolean; yes?: boolean };

export function applyCommand(deps: Deps, run = runApply): Command {
  return syncCommand('apply', 'create, update and delete Jenkins jobs and views as the file says')
    .description(
      'Make Jenkins match the file: create, update, and delete jobs and views of this source only.\n\n' +
        'Deletions ask for confirmation on a terminal and need --yes elsewhere. Exit 1 if any item failed.',
    )
    .option('--dry-run', 'only show the plan (the same as jobs diff, with its exit codes)')
    .option('-y, --yes', 'confirm deletions without asking')
    .addHelpText('after', '\nExample (a seed job step):\n  repoadmin jobs apply jenkins-dsl-jobs.json --yes')
    .action(
      action<ApplyFlags, ApplyOptions>(deps, (flags, [file]) => ({ ...syncOptions(file, flags), dryRun: Boolean(flags.dryRun), yes: Boolean(flags.yes) }), run),
    );
}

export async function runApply(options: ApplyOptions, deps: Pick<Deps, 'env' | 'io' | 'prompter' | 'settings'>): Promise<Report> {
  const { plan, client } = await planSyncOptions(options, deps);
  if (options.dryRun) return diffOutcome(plan);
  if (plan.emptyGuard) throw new AppError('validation', `refusing to apply: ${plan.emptyGuard}`);
  const deletions = plan.items.filter((item) => item.action === 'delete' || item.action === 'replace');
  if (deletions.length > 0 && !options.yes) {
    const list = deletions.map(planLine);
    if (!canPrompt(deps)) {
      throw new AppError('usage', `apply would delete ${deletions.length} item(s) and cannot ask here: pass --yes to confirm\n${list.join('\n')}`);
    }
    deps.io.err(list.join('\n'));
    const ok = await deps.prompter.confirm(`Delete ${deletions.length} item(s) from ${client.url}?`, { default: false });
    if (!ok) throw new AppError('failed', 'cancelled: nothing was changed');
  }
  // Progress on a terminal only, and not with --quiet or --json (docs/cli.md).
  const progress = deps.io.stderrIsTTY && !deps.settings.quiet && !deps.settings.json;
  const results = await executePlan(plan, client, {
    concurrency: options.concurrency,
    onProgress: progress ? (done, total, result) => deps.io.err(`[${done}/${total}] ${resultLine(result)}`) : undefined,
    // Said on any stream (not only a terminal): a seed job's log then explains a long step.
    onWaiting: deps.settings.quiet || deps.settings.json
      ? undefined
      : (item) => deps.io.err(`waiting for Jenkins to delete job ${item.name}: it stops the job's running builds first (up to 15 s), then removes its builds`),
  });
  const failure = applyFailure(results);
  return { ...applyReport(plan, results), ...(failure ? { failure } : {}) };
}
