// `repoadmin jobs diff <file>`: the plan against the live Jenkins, with unified diffs of updates.
// Exit 0 when nothing would change, 6 when something would, the usual codes otherwise.
import type { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import { wholeNumber } from '../support.js';
import { createJenkinsClient, type JenkinsClient, type JenkinsConnection } from '../../jobs/client.js';
import { loadDefinitions, type FileInput } from '../../jobs/load.js';
import { planSync, type Plan } from '../../jobs/plan.js';
import { planData, planText } from '../../jobs/report.js';
import {
  addJenkinsOptions,
  fileCommand,
  fileInput,
  jenkinsConnection,
  outputFlags,
  type FileFlags,
  type JenkinsFlags,
} from './shared.js';


/** Jenkins handles a few parallel changes well; many more only queue up on its side. */
const MAX_CONCURRENCY = 32;

function concurrency(text: string): number {
  return wholeNumber(text, '--concurrency', 1, MAX_CONCURRENCY)!;
}

export const DEFAULT_CONCURRENCY = 4;

export interface SyncFlags extends FileFlags, JenkinsFlags {
  adopt?: boolean;
  replace?: boolean;
  allowEmpty?: boolean;
  concurrency: string;
}

export interface SyncOptions {
  input: FileInput;
  /** Read after the file is checked, so a broken file never reaches Jenkins (nor stdin). */
  connection: () => Promise<JenkinsConnection>;
  adopt: boolean;
  replace: boolean;
  allowEmpty: boolean;
  concurrency: number;
}

/** The flags diff and apply share, since diff shows what apply with the same flags would do. */
export function syncCommand(name: string, summary: string): Command {
  return addJenkinsOptions(fileCommand(name, summary))
    .option('--adopt', 'take over jobs and views of the same name that another source or a person made')
    .option('--replace', 'delete and recreate a job whose type differs (its build history is lost)')
    .option('--allow-empty', 'allow a file that deletes every job of its source (for example {})')
    .option('--concurrency <n>', 'changes and reads in parallel', String(DEFAULT_CONCURRENCY));
}

export function syncOptions(file: string | undefined, flags: SyncFlags, deps: Pick<Deps, 'env' | 'io'>): SyncOptions {
  return {
    input: fileInput(file, flags),
    connection: () => jenkinsConnection(flags, deps),
    adopt: Boolean(flags.adopt),
    replace: Boolean(flags.replace),
    allowEmpty: Boolean(flags.allowEmpty),
    concurrency: concurrency(flags.concurrency),
  };
}

export function diffCommand(deps: Deps): Command {
  return syncCommand('diff', 'show what apply would change in Jenkins')
    .description(
      'Compare the file with the live Jenkins: one line per item (+ create, ~ update, - delete, = unchanged,\n' +
        '! refused) and unified diffs of updates, credential ids and tokens masked.\n' +
        'Exit 0: nothing would change; 6: changes are pending; 1: items would be refused.',
    )
    .addHelpText('after', '\nExample:\n  JENKINS_URL=https://ci.example.com JENKINS_USER=seed JENKINS_API_TOKEN=... repoadmin jobs diff jenkins-dsl-jobs.json')
    .action(async (file: string | undefined, flags: SyncFlags, command: Command) => {
      const { plan } = await runDiff(syncOptions(file, flags, deps), deps);
      showPlan(plan, outputFlags(command).json, deps);
    });
}

export interface DiffResult {
  plan: Plan;
  client: JenkinsClient;
}

export async function runDiff(options: SyncOptions, deps: Pick<Deps, 'env'>): Promise<DiffResult> {
  const { sourceId, definitions } = await loadDefinitions(options.input, deps.env);
  const client = createJenkinsClient(await options.connection());
  const plan = await planSync(definitions, client, { ...options, sourceId });
  return { plan, client };
}

/** Prints a plan and ends with its exit code: 1 if refused, 6 if changes are pending, else 0. */
export function showPlan(plan: Plan, json: boolean, deps: Pick<Deps, 'io'>): void {
  const data = planData(plan);
  deps.io.out(json ? JSON.stringify(data, null, 2) : planText(plan));
  if (data.emptyGuard) deps.io.err(`warning: apply would refuse: ${data.emptyGuard}`);
  const refused = data.counts.refuse;
  if (refused > 0) {
    throw new AppError('conflict', `${refused} item${refused === 1 ? '' : 's'} would be refused (see "! refused" above)`);
  }
  if (data.changes) throw new AppError('changes_pending', '');
}
