// `repoadmin jobs apply <file>`: carries the plan out; deletions need a confirmation or --yes.
// Exit 1 when any item failed or was refused; --dry-run is `jobs diff`.
import type { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { canPrompt, type Deps } from '../../deps.js';
import { executePlan, type ItemResult } from '../../jobs/execute.js';
import type { Plan } from '../../jobs/plan.js';
import { planData, planLine, resultLine, summaryLine } from '../../jobs/report.js';
import { runDiff, showPlan, syncCommand, syncOptions, type SyncFlags, type SyncOptions } from './diff.js';
import { outputFlags } from './shared.js';

export interface ApplyOptions extends SyncOptions {
  yes: boolean;
  /** Progress lines on stderr (a terminal, not --quiet or --json). */
  progress: boolean;
}

export interface ApplyResult {
  plan: Plan;
  results: ItemResult[];
}

export function applyCommand(deps: Deps): Command {
  return syncCommand('apply', 'create, update and delete Jenkins jobs and views as the file says')
    .description(
      'Make Jenkins match the file: create, update, and delete jobs and views of this source only.\n' +
        'Deletions ask for confirmation on a terminal and need --yes elsewhere. Exit 1 if any item failed.',
    )
    .option('--dry-run', 'only show the plan (the same as jobs diff, with its exit codes)')
    .option('-y, --yes', 'confirm deletions without asking')
    .addHelpText('after', '\nExample (a seed job step):\n  repoadmin jobs apply jenkins-dsl-jobs.json --yes')
    .action(async (file: string | undefined, flags: SyncFlags & { dryRun?: boolean; yes?: boolean }, command: Command) => {
      const { json, quiet } = outputFlags(command);
      const options = syncOptions(file, flags, deps);
      if (flags.dryRun) {
        showPlan((await runDiff(options, deps)).plan, json, deps);
        return;
      }
      const result = await runApply({ ...options, yes: Boolean(flags.yes), progress: deps.io.stderrIsTTY && !quiet && !json }, deps);
      showResults(result, json, deps);
    });
}

export async function runApply(options: ApplyOptions, deps: Deps): Promise<ApplyResult> {
  const { plan, client } = await runDiff(options, deps);
  if (plan.emptyGuard) throw new AppError('validation', `refusing to apply: ${plan.emptyGuard}`);
  const deletions = plan.items.filter((item) => item.action === 'delete' || item.action === 'replace');
  if (deletions.length > 0 && !options.yes) {
    const list = deletions.map(planLine);
    if (!canPrompt(deps)) {
      throw new AppError('usage', `apply would delete ${deletions.length} item(s) and cannot ask here: pass --yes to confirm\n${list.join('\n')}`);
    }
    deps.io.err(list.join('\n'));
    const ok = await deps.prompter.confirm(`Delete ${deletions.length} item(s) from ${client.url}?`, { default: false });
    if (!ok) throw new AppError('conflict', 'cancelled: nothing was changed');
  }
  const results = await executePlan(plan, client, {
    concurrency: options.concurrency,
    onProgress: options.progress ? (done, total, result) => deps.io.err(`[${done}/${total}] ${resultLine(result)}`) : undefined,
  });
  return { plan, results };
}

/** Prints what was done and a summary; fails (exit 1) when any item failed or was refused. */
export function showResults(result: ApplyResult, json: boolean, deps: Pick<Deps, 'io'>): void {
  const failed = result.results.filter((r) => !r.ok);
  if (json) {
    const data = planData(result.plan);
    const outcome = result.results.map((r) => ({ kind: r.item.kind, name: r.item.name, action: r.item.action, ok: r.ok, ...(r.error ? { error: r.error } : {}) }));
    deps.io.out(JSON.stringify({ sourceId: data.sourceId, counts: data.counts, results: outcome, failed: failed.length }, null, 2));
  } else {
    const lines = result.results.filter((r) => r.item.action !== 'unchanged').map(resultLine);
    deps.io.out([...lines, `summary: ${summaryLine(result.results)}`].join('\n'));
  }
  if (failed.length > 0) {
    const what = failed.map((r) => `${r.item.kind} ${r.item.name}`).join(', ');
    throw new AppError('conflict', `${failed.length} of ${result.results.length} items failed: ${what}`);
  }
}
