// Reads a definition file from disk or, for a seed job, from a shallow fetch of a git repository
// with the system's git, and names its source.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppError } from '../../common/errors.js';
import { withoutUserInfo } from '../../common/urls.js';
import { DEFINITION_FILE, ciOf, parseDefinitions, type Definitions } from './model.js';
import { gitSourceId, localSourceId } from './source.js';

const run = promisify(execFile);

export interface FileInput {
  /** A local file path. */
  file: string | undefined;
  /** A repository address holding the file (--git). */
  git: string | undefined;
  ref: string | undefined;
  /** Path of the file inside the repository (--path). */
  path: string | undefined;
  /** Overrides the `<ci>` of the file name. */
  ci: string | undefined;
  /** Overrides the source id. */
  source: string | undefined;
}

export interface LoadedFile {
  /** How messages name the file. */
  fileName: string;
  sourceId: string;
  definitions: Definitions;
}

/** Reads, checks and parses the file; throws a `validation` AppError listing every problem. */
export async function loadDefinitions(input: FileInput, env: NodeJS.ProcessEnv): Promise<LoadedFile> {
  if (input.file && input.git) throw new AppError('usage', 'give either a file or --git, not both');
  if (input.git) return loadFromGit(input, input.git, env);
  const file = input.file ?? (await definitionFileIn('.'));
  ciOf(file, input.ci);
  const text = await readText(file);
  const definitions = parseDefinitions(text, file, env);
  return { fileName: file, sourceId: input.source ?? (await localSourceId(await realpath(file))), definitions };
}

/**
 * The file a command given none reads: the one `<ci>-dsl-jobs.json` of `dir` (the current folder).
 * None or several: a usage error naming what was found.
 */
export async function definitionFileIn(dir: string): Promise<string> {
  const files = (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((entry) => entry.isFile()).map((entry) => entry.name).sort();
  const definitions = files.filter((name) => DEFINITION_FILE.test(name));
  const where = dir === '.' ? 'the current folder' : dir;
  if (definitions.length === 1) return dir === '.' ? definitions[0]! : join(dir, definitions[0]!);
  if (definitions.length > 1) throw new AppError('usage', `several definition files in ${where} (${definitions.join(', ')}): give one as <file>`);
  const json = files.filter((name) => name.endsWith('.json'));
  const found = json.length > 0 ? ` (JSON files there: ${json.join(', ')})` : '';
  throw new AppError('usage', `no <ci>-dsl-jobs.json in ${where}${found}: give <file> or --git URL`);
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new AppError('validation', `cannot read ${file}: ${reason}`);
  }
}

async function loadFromGit(input: FileInput, url: string, env: NodeJS.ProcessEnv): Promise<LoadedFile> {
  const path = input.path ?? `${input.ci ?? 'jenkins'}-dsl-jobs.json`;
  ciOf(path, input.ci);
  const dir = await mkdtemp(join(tmpdir(), 'repoadmin-jobs-'));
  try {
    await shallowFetch(url, input.ref, dir, env);
    const text = await readText(join(dir, path)).catch(() => {
      throw new AppError('not_found', `${path} is not in ${withoutUserInfo(url)}${input.ref ? ` at ${input.ref}` : ''}; give its place with --path`);
    });
    const definitions = parseDefinitions(text, path, env);
    return { fileName: path, sourceId: input.source ?? gitSourceId(url, path), definitions };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One commit of `ref` (a branch, tag or commit; default HEAD), without history. */
async function shallowFetch(url: string, ref: string | undefined, dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const gitEnv = { ...env, GIT_TERMINAL_PROMPT: '0' };
  try {
    await run('git', ['init', '-q', dir], { env: gitEnv });
    await run('git', ['-C', dir, 'fetch', '-q', '--depth', '1', '--', url, ref ?? 'HEAD'], { env: gitEnv });
    await run('git', ['-C', dir, 'checkout', '-q', 'FETCH_HEAD'], { env: gitEnv });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? (error as Error).message).trim();
    const last = withoutUserInfo(stderr.split('\n').filter(Boolean).pop() ?? 'git failed');
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new AppError('usage', '--git needs the git command, and it was not found');
    const missing = /couldn't find remote ref|not found|does not exist|not our ref/i.test(stderr);
    throw new AppError(missing ? 'not_found' : 'unreachable', `cannot fetch ${withoutUserInfo(url)}${ref ? ` at ${ref}` : ''}: ${last.replace(/^fatal: /, '')}`);
  }
}
