// `repoadmin publish`: publishes a version record, filling branch, address and project from the pipeline.
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { formatCreationDate, parseCreationDate } from '../../../common/dates.js';
import { AppError } from '../../../common/errors.js';
import { LooseBoolean } from '../../../common/schemas/common.js';
import { DESCRIPTION_MAX_BYTES, VersionRecord, type VersionRecordBody } from '../../../common/schemas/repositories.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, checkRequest, example, withFlagNames, type FieldLabels } from '../support.js';
import { withoutUserInfo } from '../../../common/urls.js';
import { branchFromEnv, repositoryUrlFromEnv } from './environment.js';

export interface PublishOptions {
  group?: string;
  artifact?: string;
  version?: string;
  project?: string;
  branch?: string;
  repositoryUrl?: string;
  type?: string;
  latest: boolean;
  date?: string;
  description?: string;
  descriptionFile?: string;
  /** A record (JSON) the flags complete or override. */
  file?: string;
}

export function publishCommand(deps: Deps, run = runPublish): Command {
  return new Command('publish')
    .summary('publish a version record')
    // One paragraph each: commander wraps them to the terminal's width.
    .description(
      [
        'Publish a version record. Branch, repository address and project come from the build server when not given: ' +
          'the branch from BRANCH_NAME, GIT_BRANCH, CI_COMMIT_REF_NAME or GITHUB_REF_NAME; the address from GIT_URL, ' +
          'CI_PROJECT_URL or GITHUB_SERVER_URL/GITHUB_REPOSITORY; the project from the logged-in user.',
        'Publishing the same coordinates again replaces the record. Prints the record uid.',
      ].join('\n\n'),
    )
    .usage('--group G --artifact A --version V [options]')
    .option('--group <groupId>', 'group id, e.g. com.acme')
    .option('--artifact <artifactId>', 'artifact id')
    .option('--version <version>', 'version')
    .option('--project <name>', 'project (default: the logged-in user\'s)')
    .option('--branch <branch>', 'branch (default: from the build server)')
    .option('--repository-url <url>', 'source repository address (default: from the build server)')
    .option('--type <type>', 'kind of artifact (server default: LIBRARY)')
    .option('--latest', 'make this the latest version of its project, artifact and branch')
    .option('--date <iso>', 'creation date with an offset (default: now)')
    .option('--description <text>', 'description (Markdown)')
    .option('--description-file <file>', 'read the description from a file (- for standard input)')
    .option('--file <record.json>', 'a version record in JSON; flags override its fields')
    .addHelpText(
      'after',
      example(
        'repoadmin publish --group com.acme --artifact app --version 1.2.3 --latest',
        'REPOADMIN_URL=https://registry.example.com REPOADMIN_TOKEN=$TOKEN \\\n    BRANCH_NAME=main repoadmin publish --group com.acme --artifact app \\\n    --version "$VERSION"',
      ),
    )
    .action(action<PublishOptions, PublishOptions>(deps, (flags) => ({ ...flags, latest: Boolean(flags.latest) }), run));
}

async function readRecordFile(path: string): Promise<Partial<VersionRecordBody>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new AppError('usage', `--file: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Partial<VersionRecordBody>;
  } catch (error) {
    throw new AppError('usage', `--file: ${path} is not a JSON object (${(error as Error).message})`);
  }
}

async function description(opts: PublishOptions, deps: Pick<Deps, 'io'>): Promise<string | undefined> {
  if (opts.description !== undefined && opts.descriptionFile !== undefined) {
    throw new AppError('usage', 'pass either --description or --description-file, not both');
  }
  if (opts.descriptionFile === undefined) return opts.description;
  if (opts.descriptionFile === '-') return deps.io.readStdin();
  try {
    return await readFile(opts.descriptionFile, 'utf8');
  } catch (error) {
    throw new AppError('usage', `--description-file: cannot read ${opts.descriptionFile} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

function required(value: string | undefined, supply: string): string {
  if (!value) throw new AppError('usage', `missing ${supply}`);
  return value;
}

export async function runPublish(opts: PublishOptions, deps: Pick<Deps, 'io' | 'env' | 'now' | 'api'>): Promise<Report> {
  const base = opts.file ? await readRecordFile(opts.file) : {};
  const artifact = {
    groupId: required(opts.group ?? base.artifact?.groupId, '--group'),
    artifactId: required(opts.artifact ?? base.artifact?.artifactId, '--artifact'),
    version: required(opts.version ?? base.artifact?.version, '--version'),
  };
  const branch = required(
    opts.branch ?? base.branch ?? branchFromEnv(deps.env)?.value,
    '--branch (or BRANCH_NAME, GIT_BRANCH, CI_COMMIT_REF_NAME, GITHUB_REF_NAME)',
  );
  if (opts.date !== undefined && !parseCreationDate(opts.date)) {
    throw new AppError('usage', `--date must be an ISO 8601 date-time with an offset, e.g. 2019-03-02T20:30:35.420+0000, not "${opts.date}"`);
  }
  const address = opts.repositoryUrl ?? base.repositoryUrl ?? repositoryUrlFromEnv(deps.env);
  const labels = fieldLabels(opts, base, deps.env);
  const text = (await description(opts, deps)) ?? base.description;
  checkDescriptionSize(text, labels.description!);
  const projectName = opts.project ?? base.projectName ?? (await projectOfUser(deps));
  const record: VersionRecordBody = {
    ...base,
    projectName,
    branch,
    artifact,
    repositoryUrl: address ? withoutUserInfo(address) : undefined,
    creationDate: opts.date ?? base.creationDate ?? formatCreationDate(deps.now()),
    type: opts.type ?? base.type,
    // A record file may say "false" as text, as older clients do (the schema's LooseBoolean); only true marks the latest.
    latestVersion: opts.latest || LooseBoolean.safeParse(base.latestVersion).data === true || undefined,
    description: text,
  };
  checkRequest(VersionRecord, record, labels);
  let answer;
  try {
    answer = await deps.api.publish(record);
  } catch (error) {
    throw withFlagNames(error, labels);
  }
  const coordinates = `${artifact.groupId}:${artifact.artifactId}:${artifact.version}`;
  const latest = record.latestVersion ? ', marked latest' : '';
  return {
    json: answer,
    lines: [answer.uid],
    notes: [`${answer.created ? 'Created' : 'Updated'} ${coordinates} (project ${projectName}, branch ${branch}${latest}).`],
  };
}

/** Where each field of the record came from, as the user would name it. */
function fieldLabels(opts: PublishOptions, base: Partial<VersionRecordBody>, env: NodeJS.ProcessEnv): FieldLabels {
  const inFile = (path: string) => (opts.file ? `${path} in ${opts.file}` : path);
  const from = (flag: string, given: unknown, path: string) => (given !== undefined ? flag : inFile(path));
  const branchVariable = branchFromEnv(env)?.from;
  return {
    projectName: from('--project', opts.project, 'projectName'),
    branch: opts.branch !== undefined || base.branch !== undefined || !branchVariable ? from('--branch', opts.branch, 'branch') : branchVariable,
    'artifact.groupId': from('--group', opts.group, 'artifact.groupId'),
    'artifact.artifactId': from('--artifact', opts.artifact, 'artifact.artifactId'),
    'artifact.version': from('--version', opts.version, 'artifact.version'),
    repositoryUrl:
      opts.repositoryUrl === undefined && base.repositoryUrl === undefined && repositoryUrlFromEnv(env) !== undefined
        ? 'the repository address (from GIT_URL, CI_PROJECT_URL or GITHUB_SERVER_URL/GITHUB_REPOSITORY)'
        : from('--repository-url', opts.repositoryUrl, 'repositoryUrl'),
    creationDate: from('--date', opts.date, 'creationDate'),
    type: from('--type', opts.type, 'type'),
    latestVersion: inFile('latestVersion'),
    description:
      opts.description !== undefined
        ? '--description'
        : opts.descriptionFile !== undefined
          ? `--description-file ${opts.descriptionFile}`
          : inFile('description'),
  };
}

/** Said before sending: a description far over the limit would otherwise meet the 1 MiB body limit first. */
function checkDescriptionSize(description: string | undefined, label: string): void {
  const bytes = description === undefined ? 0 : Buffer.byteLength(description, 'utf8');
  if (bytes <= DESCRIPTION_MAX_BYTES) return;
  throw new AppError(
    'validation',
    `${label}: the description is ${bytes} bytes; the server takes at most ${DESCRIPTION_MAX_BYTES} bytes (${DESCRIPTION_MAX_BYTES / 1024} KiB). Shorten it, or link to the full text`,
  );
}

/** The project of the token's user, when no flag or record file names one. */
async function projectOfUser(deps: Pick<Deps, 'api'>): Promise<string> {
  const projectName = await deps.api.projectName();
  if (!projectName) throw new AppError('usage', 'missing --project: an administrator has no project of its own');
  return projectName;
}
