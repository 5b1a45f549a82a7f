// Drives `repoadmin jobs` through main(argv, deps) against a Jenkins simulator, with definition
// files written to a temporary directory.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../cli/main.js';
import type { Prompter } from '../../cli/deps.js';
import { fakeDeps } from '../cli/fakes.js';
import { JENKINS_RELEASES, JenkinsSimulator, type JenkinsRelease, type SimulatorOptions } from './simulator.js';

export const USER = 'seed';
export const TOKEN = '11e4d3f5c0a2b8d9e7f6a5b4c3d2e1f0ab';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The Jenkins behaviour these tests run against: vitest.config.ts runs test/jenkins once per
 * release (REPOADMIN_TEST_JENKINS); run alone, a file gets the current one.
 */
export const RELEASE: JenkinsRelease = releaseFromEnv(process.env.REPOADMIN_TEST_JENKINS);

function releaseFromEnv(value: string | undefined): JenkinsRelease {
  if (value === undefined) return 'current';
  if (!(JENKINS_RELEASES as readonly string[]).includes(value)) throw new Error(`REPOADMIN_TEST_JENKINS must be one of ${JENKINS_RELEASES.join(', ')}`);
  return value as JenkinsRelease;
}

export async function startJenkins(options: SimulatorOptions = { csrf: 'strict', users: { [USER]: TOKEN } }): Promise<JenkinsSimulator> {
  return new JenkinsSimulator({ release: RELEASE, ...options }).start();
}

/** The environment a seed job step has: where Jenkins is and who we are. */
export function jenkinsEnv(jenkins: JenkinsSimulator, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { JENKINS_URL: jenkins.url, JENKINS_USER: USER, JENKINS_API_TOKEN: TOKEN, ...extra };
}

export async function repoadmin(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; tty?: boolean; stdin?: string; prompter?: Prompter } = {},
): Promise<CliRun> {
  const deps = fakeDeps({ env: options.env ?? {}, tty: options.tty, stdin: options.stdin, prompter: options.prompter });
  const code = await main(['node', 'repoadmin', ...args], deps);
  return { code, stdout: deps.io.stdoutText(), stderr: deps.io.stderrText() };
}

/** A scratch directory for definition files, removed by `cleanup`. */
export async function scratch(): Promise<{ dir: string; write(name: string, content: unknown): Promise<string>; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'repoadmin-jobs-test-'));
  return {
    dir,
    async write(name, content) {
      const path = join(dir, name);
      await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
      return path;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A pipeline job entry of a definition file. */
export function pipelineJob(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    jobName: name,
    pipelineScriptPath: 'Jenkinsfile',
    git: { repositoryId: name.replace(/\//g, '-'), repositoryUrl: `https://git.example.com/team/${name.replace(/\//g, '-')}.git` },
    ...extra,
  };
}

export function multibranchJob(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...pipelineJob(name), ...extra };
}
