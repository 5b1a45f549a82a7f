// Flags every `repoadmin jobs` command shares: where the file comes from, how to reach Jenkins,
// and the sync flags of diff and apply (diff shows what apply with the same flags would do).
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { timeoutFrom } from '../../api/client.js';
import type { Deps } from '../../deps.js';
import type { JenkinsConnection } from '../../jenkins/client.js';
import type { ItemResult } from '../../jenkins/execute.js';
import { planReport } from '../../jenkins/report.js';
import type { Plan } from '../../jenkins/plan.js';
import type { Report } from '../../output/index.js';
import type { FileInput } from '../../jenkins/load.js';
import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY, planFromFile, type Planned } from '../../jenkins/sync.js';
import { wholeNumber } from '../support.js';

export interface FileFlags {
  git?: string;
  ref?: string;
  path?: string;
  ci?: string;
  source?: string;
}

export interface JenkinsFlags {
  jenkinsUrl?: string;
  jenkinsUser?: string;
  jenkinsTokenStdin?: boolean;
}

export interface SyncFlags extends FileFlags, JenkinsFlags {
  adopt?: boolean;
  replace?: boolean;
  allowEmpty?: boolean;
  concurrency: string;
}

export interface SyncOptions {
  input: FileInput;
  /** Read after the file is checked, so a broken file never reaches Jenkins (nor stdin). */
  jenkins: JenkinsFlags;
  adopt: boolean;
  replace: boolean;
  allowEmpty: boolean;
  concurrency: number;
}

/** A jobs subcommand with the file operand and the file flags. */
export function fileCommand(name: string, summary: string): Command {
  return new Command(name)
    .summary(summary)
    .helpOption('-h, --help', 'show help')
    .argument('[file]', 'the definition file, <ci>-dsl-jobs.json (default: the one in the current folder)')
    .option('--git <url>', 'read the file from this git repository (a shallow fetch) instead of <file>')
    .option('--ref <ref>', 'with --git: branch, tag or commit (default: the remote HEAD)')
    .option('--path <file>', 'with --git: the file inside the repository (default: jenkins-dsl-jobs.json)')
    .option('--ci <name>', 'the build server, instead of the <ci> of the file name')
    .option('--source <id>', "ownership source id (default: the file's git remote and path, else its absolute path)");
}

/** A jobs subcommand with the file operand, the file flags, the Jenkins flags and the sync flags. */
export function syncCommand(name: string, summary: string): Command {
  return addJenkinsOptions(fileCommand(name, summary))
    .option('--adopt', 'take over jobs and views of the same name that another source or a person made')
    .option('--replace', 'delete and recreate a job whose type differs (its build history is lost)')
    .option('--allow-empty', 'allow a file that deletes every job of its source (for example {})')
    .option('--concurrency <n>', 'changes and reads in parallel', String(DEFAULT_CONCURRENCY));
}

export function syncOptions(file: string | undefined, flags: SyncFlags): SyncOptions {
  return {
    input: fileInput(file, flags),
    jenkins: { jenkinsUrl: flags.jenkinsUrl, jenkinsUser: flags.jenkinsUser, jenkinsTokenStdin: flags.jenkinsTokenStdin },
    adopt: Boolean(flags.adopt),
    replace: Boolean(flags.replace),
    allowEmpty: Boolean(flags.allowEmpty),
    concurrency: wholeNumber(flags.concurrency, '--concurrency', 1, MAX_CONCURRENCY)!,
  };
}

/** The plan of the file against the live Jenkins, for diff and apply. */
export function planSyncOptions(options: SyncOptions, deps: Pick<Deps, 'env' | 'io'>): Promise<Planned> {
  return planFromFile(options.input, options, () => jenkinsConnection(options.jenkins, deps), deps.env);
}

export function addJenkinsOptions(command: Command): Command {
  return command
    .option('--jenkins-url <url>', 'Jenkins address (env JENKINS_URL)')
    .option('--jenkins-user <user>', 'Jenkins user (env JENKINS_USER)')
    .option('--jenkins-token-stdin', 'read the API token from standard input (else env JENKINS_API_TOKEN)');
}

export function fileInput(file: string | undefined, flags: FileFlags): FileInput {
  // The id goes into an XML comment in every job's description: it must not end or break it.
  if (flags.source !== undefined && (flags.source.trim() === '' || /-->|--$|[\r\n]/.test(flags.source))) {
    throw new AppError('usage', `--source must be one line without "-->", not ${JSON.stringify(flags.source)}`);
  }
  if (flags.path !== undefined && flags.path.split(/[\\/]/).includes('..')) {
    throw new AppError('usage', `--path names a file inside the repository, without "..": ${flags.path}`);
  }
  return { file, git: flags.git, ref: flags.ref, path: flags.path, ci: flags.ci, source: flags.source };
}

/** Where and as whom to talk to Jenkins: flags, then the environment Jenkins sets in every build. */
export async function jenkinsConnection(flags: JenkinsFlags, deps: Pick<Deps, 'env' | 'io'>): Promise<JenkinsConnection> {
  const url = flags.jenkinsUrl ?? deps.env.JENKINS_URL;
  if (!url) throw new AppError('usage', 'no Jenkins address: pass --jenkins-url or set JENKINS_URL');
  if (!/^https?:\/\//i.test(url)) throw new AppError('usage', `--jenkins-url must start with http:// or https://, not "${url}"`);
  const user = flags.jenkinsUser ?? deps.env.JENKINS_USER;
  const token = flags.jenkinsTokenStdin ? (await deps.io.readStdin()).trim() : deps.env.JENKINS_API_TOKEN;
  if (flags.jenkinsTokenStdin && !token) throw new AppError('usage', '--jenkins-token-stdin: standard input was empty');
  if (token && !user) throw new AppError('usage', 'an API token needs a user: pass --jenkins-user or set JENKINS_USER');
  if (user && !token) throw new AppError('usage', `no API token for ${user}: set JENKINS_API_TOKEN or pass --jenkins-token-stdin`);
  return { url, user, token, timeoutMs: timeoutFrom(deps.env) };
}


/**
 * `jobs diff` (and `apply --dry-run`): the plan's report, failing with exit 1 when items would be
 * refused and 6 when changes (deletions included) are pending (docs/jobs.md, "Commands").
 */
export function diffOutcome(plan: Plan): Report {
  const report = planReport(plan);
  const refused = report.json.counts.refuse;
  if (refused > 0) return { ...report, failure: new AppError('failed', `${refused} item${refused === 1 ? '' : 's'} would be refused (see "! refused" above)`) };
  return report.json.changes ? { ...report, failure: new AppError('changes_pending', '') } : report;
}

/** `jobs apply`: exit 1 when any item failed or was refused. */
export function applyFailure(results: ItemResult[]): AppError | undefined {
  const failed = results.filter((r) => !r.ok);
  if (failed.length === 0) return undefined;
  const what = failed.map((r) => `${r.item.kind} ${r.item.name}`).join(', ');
  return new AppError('failed', `${failed.length} of ${results.length} items failed: ${what}`);
}
