// The job definition file `<ci>-dsl-jobs.json` (docs/jobs.md, "The file"):
// its zod schema, the defaults and null semantics, and every error of a file at once with its path.
import * as z from 'zod';
import { AppError, type FieldError } from '../../common/errors.js';
import { editDistance } from '../../common/suggest.js';
import { cronProblem } from './cron.js';
import { itemKey, jobNameProblem, nameProblem, parentFolders } from './names.js';

/** Days and builds kept when a job has no `logRotator` at all (docs/jobs.md, "The file"). */
export const DEFAULT_LOG_ROTATOR = { daysToKeep: 10, numToKeep: 5 } as const;

const cron = z.string().refine((spec) => cronProblem(spec) === undefined, {
  error: (issue) => `invalid cron: ${cronProblem(String(issue.input))}`,
});

/**
 * Jenkins keeps these counts in a Java int: XStream wraps 2^31..2^32-1 to negative numbers and
 * reads larger ones as 0 while answering 200, and LogRotator then deletes nearly every build.
 */
export const MAX_JAVA_INT = 2_147_483_647;

const keepCount = z
  .number()
  .int()
  .min(1)
  .max(MAX_JAVA_INT, { error: `must be at most ${MAX_JAVA_INT} (Jenkins keeps a 32-bit number and would mangle a larger one); use null for unlimited` })
  .nullable();

/** SCM polling: an empty spec (no schedule) is polling on post-commit hooks only. */
const pollSpec = z.string().refine((spec) => cronProblem(spec, { empty: true }) === undefined, {
  error: (issue) => `invalid cron: ${cronProblem(String(issue.input), { empty: true })}`,
});

const gitSchema = z.strictObject({
  /** Identifier of the repository for the SCM plugin (multibranch source id). */
  repositoryId: z.string().min(1),
  /** Address of the repository. */
  repositoryUrl: z.string().min(1),
  /** When to poll for new commits (pipeline; empty: only when a post-commit hook asks) or scan branches (multibranch). */
  repositoryTrigger: pollSpec.optional(),
  /** Credentials for a private repository; overrides GIT_CREDENTIALS_ID. */
  credentialsId: z.string().min(1).optional(),
});

const logRotatorSchema = z
  .strictObject({
    /** Days history is kept; null is unlimited. */
    daysToKeep: keepCount.optional(),
    /** Builds kept; null is unlimited. */
    numToKeep: keepCount.optional(),
  })
  .nullable();

const commonFields = {
  jobName: z.string().refine((name) => jobNameProblem(name) === undefined, {
    error: (issue) => `invalid job name: ${jobNameProblem(String(issue.input))}`,
  }),
  jobDescription: z.string().optional(),
  view: z
    .string()
    .refine((name) => nameProblem(name) === undefined, {
      error: (issue) => `invalid view name: ${nameProblem(String(issue.input))}`,
    })
    .optional(),
  // Trimmed here: CpsScmFlowDefinition's constructor trims scriptPath, but a config.xml read by
  // XStream bypasses the constructor, so Jenkins would look for the file with the spaces.
  pipelineScriptPath: z.string().trim().min(1),
  git: gitSchema,
  logRotator: logRotatorSchema.optional(),
};

const pipelineOnly = z.never({ error: 'applies to pipeline jobs only' }).optional();

const pipelineJobSchema = z.strictObject({
  ...commonFields,
  cronTrigger: cron.optional(),
  remoteTriggerUuid: z.uuid({ error: 'must be a UUID' }).optional(),
  remoteBranchName: z.string().min(1).optional(),
});

const multiBranchJobSchema = z.strictObject({
  ...commonFields,
  // A branch scan on an empty schedule would never run: the timer needs a schedule.
  git: gitSchema.extend({ repositoryTrigger: cron.optional() }),
  cronTrigger: pipelineOnly,
  remoteTriggerUuid: pipelineOnly,
  remoteBranchName: pipelineOnly,
});

export const definitionFileSchema = z.strictObject({
  multiBranchJobs: z.array(multiBranchJobSchema).optional(),
  pipelineJobs: z.array(pipelineJobSchema).optional(),
});

export type DefinitionFile = z.infer<typeof definitionFileSchema>;

export interface LogRotator {
  /** -1 = unlimited, as Jenkins writes it. */
  daysToKeep: number;
  numToKeep: number;
}

/** One job as it will be written to Jenkins, after defaults and the environment are applied. */
export interface JobSpec {
  kind: 'pipeline' | 'multibranch';
  /** Full name, folders included (`team/app`). */
  name: string;
  description: string;
  view: string | undefined;
  scriptPath: string;
  git: { repositoryId: string; url: string; trigger: string | undefined; credentialsId: string | undefined };
  /** Pipeline jobs only. */
  cronTrigger: string | undefined;
  authToken: string | undefined;
  branch: string | undefined;
  /** null: no rotation at all. */
  logRotator: LogRotator | null;
}

export interface Definitions {
  jobs: JobSpec[];
  /** Folders the jobs live in, outermost first. */
  folders: string[];
  /** View name -> full names of its jobs. */
  views: Map<string, string[]>;
}

/** What a definition file is named: `<ci>-dsl-jobs.json`, the build server first. */
export const DEFINITION_FILE = /^(.+)-dsl-jobs\.json$/;

/** Builds server adapters that exist: the `<ci>` of `<ci>-dsl-jobs.json`. */
export const SUPPORTED_CI = ['jenkins'] as const;

/** The `<ci>` of a file name, checked against the supported ones (or the --ci override). */
export function ciOf(fileName: string, override?: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const ci = override ?? DEFINITION_FILE.exec(base)?.[1];
  const supported = SUPPORTED_CI.join(', ');
  if (ci === undefined) {
    throw new AppError('usage', `cannot tell the build server from the file name ${base}: name it <ci>-dsl-jobs.json (supported: ${supported}) or pass --ci`);
  }
  if (!(SUPPORTED_CI as readonly string[]).includes(ci)) {
    throw new AppError('usage', `unsupported build server "${ci}" (from ${override ? '--ci' : base}); supported: ${supported}`);
  }
  return ci;
}

/**
 * Reads the file's text into job specs, or throws one `validation` AppError listing every problem
 * as `<file>: <path>: <problem>`. `env` supplies GIT_CREDENTIALS_ID (the agent running the command).
 */
export function parseDefinitions(text: string, fileName: string, env: NodeJS.ProcessEnv): Definitions {
  const checked = checkFile(text);
  const errors = checked.errors;
  if (checked.file) {
    const definitions = toDefinitions(checked.file, env);
    if (definitions.errors.length === 0) return definitions.result;
    errors.push(...definitions.errors);
  }
  throw invalidFile(fileName, errors);
}

function invalidFile(fileName: string, errors: FieldError[]): AppError {
  const lines = errors.map((e) => `${fileName}: ${e.path}: ${e.message}`);
  const count = errors.length === 1 ? '1 problem' : `${errors.length} problems`;
  return new AppError('validation', `${fileName} has ${count}; nothing was sent to Jenkins\n${lines.join('\n')}`);
}

/** The file read and checked once: its data when it is valid, else every problem found. */
function checkFile(text: string): { file?: DefinitionFile; errors: FieldError[] } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { errors: [{ path: '(file)', message: `not valid JSON: ${(error as Error).message}` }] };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { errors: [{ path: '(top level)', message: 'expected an object with multiBranchJobs and/or pipelineJobs' }] };
  }
  const result = definitionFileSchema.safeParse(data, {
    error: (issue) => (issue.input === undefined && issue.code === 'invalid_type' ? 'required' : undefined),
  });
  const errors = [...(result.success ? [] : result.error.issues.flatMap(issueErrors)), ...xmlCharacterErrors(data, [])];
  return result.success && errors.length === 0 ? { file: result.data, errors } : { errors };
}

/** What XML 1.0 cannot hold, not even as a character reference: most C0 controls, U+FFFE/F, lone surrogates. */
// eslint-disable-next-line no-control-regex -- matches the characters XML cannot hold, on purpose
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|\p{Cs}/u;

/** Every string of the file ends up in a config.xml: one that XML cannot hold is an error here, not a 500 from Jenkins. */
function xmlCharacterErrors(value: unknown, path: PropertyKey[]): FieldError[] {
  if (typeof value === 'string') {
    const bad = NOT_XML.exec(value)?.[0];
    if (bad === undefined) return [];
    const code = bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return [{ path: formatPath(path), message: `contains U+${code}, which XML cannot hold` }];
  }
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => xmlCharacterErrors(child, [...path, Array.isArray(value) ? Number(key) : key]));
}

function issueErrors(issue: z.core.$ZodIssue): FieldError[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: unknownKeyMessage(key, issue.path) }));
  }
  const message = issue.code === 'invalid_type' && issue.message.startsWith('Invalid input: ')
    ? issue.message.slice('Invalid input: '.length)
    : issue.message;
  return [{ path: formatPath(issue.path), message }];
}

const KNOWN_KEYS: Record<string, string[]> = {
  top: Object.keys(definitionFileSchema.shape),
  job: Object.keys(pipelineJobSchema.shape),
  git: Object.keys(gitSchema.shape),
  logRotator: ['daysToKeep', 'numToKeep'],
};

function unknownKeyMessage(key: string, path: PropertyKey[]): string {
  const last = path[path.length - 1];
  const known = path.length === 0 ? KNOWN_KEYS.top! : typeof last === 'number' ? KNOWN_KEYS.job! : KNOWN_KEYS[String(last)] ?? [];
  const close = known.find((candidate) => editDistance(candidate.toLowerCase(), key.toLowerCase()) <= 2);
  return close ? `unknown field (did you mean ${close}?)` : `unknown field (known: ${known.join(', ')})`;
}

/** `['pipelineJobs', 2, 'git', 'repositoryUrl']` -> `pipelineJobs[2].git.repositoryUrl`. */
export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}

function toDefinitions(file: DefinitionFile, env: NodeJS.ProcessEnv): { result: Definitions; errors: FieldError[] } {
  const entries = [
    ...(file.multiBranchJobs ?? []).map((job, index) => ({ job, path: `multiBranchJobs[${index}]`, kind: 'multibranch' as const })),
    ...(file.pipelineJobs ?? []).map((job, index) => ({ job, path: `pipelineJobs[${index}]`, kind: 'pipeline' as const })),
  ];
  const errors: FieldError[] = [];
  // Jenkins holds items in a case-insensitive map: `App` and `app` are one item.
  const key = itemKey;
  const firstJob = new Map<string, { name: string; path: string }>();
  for (const { job, path } of entries) {
    const earlier = firstJob.get(key(job.jobName));
    if (!earlier) firstJob.set(key(job.jobName), { name: job.jobName, path });
    else {
      const inCase = earlier.name === job.jobName ? '' : '; Jenkins names ignore case';
      errors.push({ path: `${path}.jobName`, message: `duplicate job name "${job.jobName}" (also ${earlier.path}${inCase})` });
    }
  }
  const firstFolder = new Map<string, { name: string; path: string }>();
  for (const { job, path } of entries) {
    for (const folder of parentFolders(job.jobName)) {
      const asJob = firstJob.get(key(folder));
      const earlier = firstFolder.get(key(folder));
      const message = asJob
        ? `"${folder}" is a job (${asJob.path}), so it cannot also be a folder`
        : earlier && earlier.name !== folder
          ? `folder "${folder}" is written "${earlier.name}" in ${earlier.path} (Jenkins names ignore case)`
          : undefined;
      if (message) {
        errors.push({ path: `${path}.jobName`, message });
        break;
      }
      if (!earlier) firstFolder.set(key(folder), { name: folder, path });
    }
  }
  const credentialsFromEnv = env.GIT_CREDENTIALS_ID?.trim() || undefined;
  const jobs = entries.map(({ job, kind }): JobSpec => ({
    kind,
    name: job.jobName,
    description: job.jobDescription ?? '',
    view: job.view,
    scriptPath: job.pipelineScriptPath,
    git: {
      repositoryId: job.git.repositoryId,
      url: job.git.repositoryUrl,
      trigger: job.git.repositoryTrigger,
      credentialsId: job.git.credentialsId ?? credentialsFromEnv,
    },
    cronTrigger: 'cronTrigger' in job ? job.cronTrigger : undefined,
    authToken: 'remoteTriggerUuid' in job ? job.remoteTriggerUuid : undefined,
    branch: 'remoteBranchName' in job ? job.remoteBranchName : undefined,
    logRotator: logRotatorOf(job.logRotator),
  }));
  const folders = [...new Set(jobs.flatMap((job) => parentFolders(job.name)))].sort(byDepth);
  const views = new Map<string, string[]>();
  for (const job of jobs) if (job.view) views.set(job.view, [...(views.get(job.view) ?? []), job.name]);
  return { result: { jobs, folders, views }, errors };
}

/** Absent: the defaults; null: no rotation; a field absent: its default; a field null: unlimited (-1). */
function logRotatorOf(value: { daysToKeep?: number | null; numToKeep?: number | null } | null | undefined): LogRotator | null {
  if (value === null) return null;
  const days = value?.daysToKeep === undefined ? DEFAULT_LOG_ROTATOR.daysToKeep : value.daysToKeep;
  const num = value?.numToKeep === undefined ? DEFAULT_LOG_ROTATOR.numToKeep : value.numToKeep;
  return { daysToKeep: days ?? -1, numToKeep: num ?? -1 };
}

function byDepth(a: string, b: string): number {
  return a.split('/').length - b.split('/').length || a.localeCompare(b);
}
