// Flags every `repoadmin jobs` command shares: where the file comes from, and how to reach Jenkins.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import type { JenkinsConnection } from '../../jobs/client.js';
import type { FileInput } from '../../jobs/load.js';

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

export interface OutputFlags {
  json?: boolean;
  quiet?: boolean;
}

/** A jobs subcommand with the file operand and the file flags. */
export function fileCommand(name: string, summary: string): Command {
  return new Command(name)
    .summary(summary)
    .helpOption('-h, --help', 'show help')
    .argument('[file]', 'the definition file, <ci>-dsl-jobs.json')
    .option('--git <url>', 'read the file from this git repository (a shallow fetch) instead of <file>')
    .option('--ref <ref>', 'with --git: branch, tag or commit (default: the remote HEAD)')
    .option('--path <file>', 'with --git: the file inside the repository (default: jenkins-dsl-jobs.json)')
    .option('--ci <name>', 'the build server, instead of the <ci> of the file name')
    .option('--source <id>', "ownership source id (default: the file's git remote and path, else its absolute path)");
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
  return { url, user, token };
}

/** The root's --json and --quiet (docs/cli.md global options). */
export function outputFlags(command: Command): Required<OutputFlags> {
  const all = command.optsWithGlobals() as OutputFlags;
  return { json: Boolean(all.json), quiet: Boolean(all.quiet) };
}

