// Broken definition files: each gets exit 1, a message naming the file and the JSON path, and
// not one request reaches Jenkins (validation runs before the connection is even made).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jenkinsEnv, multibranchJob, pipelineJob, repoadmin, scratch, startJenkins } from './harness.js';
import type { JenkinsSimulator } from './simulator.js';

type Json = Record<string, unknown>;

const ok = (): Json => ({ pipelineJobs: [pipelineJob('build')], multiBranchJobs: [multibranchJob('app')] });

/** The valid file with one change made to a copy of it. */
function broken(change: (file: { pipelineJobs: Json[]; multiBranchJobs: Json[] } & Json) => void): Json {
  const file = structuredClone(ok()) as { pipelineJobs: Json[]; multiBranchJobs: Json[] } & Json;
  change(file);
  return file;
}

const git = (file: { pipelineJobs: Json[] }) => file.pipelineJobs[0]!.git as Json;

const CASES: [string, Json | string, string][] = [
  ['invalid JSON', '{"pipelineJobs": [', '(file): not valid JSON'],
  ['a top level that is an array', '[]', '(top level): expected an object'],
  ['an unknown top-level key', broken((f) => (f.jobs = [])), 'jobs: unknown field'],
  ['pipelineJobs not an array', broken((f) => (f.pipelineJobs = {} as never)), 'pipelineJobs: expected array'],
  ['a missing jobName', broken((f) => delete f.pipelineJobs[0]!.jobName), 'pipelineJobs[0].jobName: required'],
  ['a missing pipelineScriptPath', broken((f) => delete f.multiBranchJobs[0]!.pipelineScriptPath), 'multiBranchJobs[0].pipelineScriptPath: required'],
  ['a missing git object', broken((f) => delete f.pipelineJobs[0]!.git), 'pipelineJobs[0].git: required'],
  ['a missing repositoryUrl', broken((f) => delete git(f).repositoryUrl), 'pipelineJobs[0].git.repositoryUrl: required'],
  ['a missing repositoryId', broken((f) => delete git(f).repositoryId), 'pipelineJobs[0].git.repositoryId: required'],
  ['a jobName that is a number', broken((f) => (f.pipelineJobs[0]!.jobName = 42)), 'pipelineJobs[0].jobName: expected string, received number'],
  ['a view that is a boolean', broken((f) => (f.pipelineJobs[0]!.view = true)), 'pipelineJobs[0].view: expected string'],
  ['logRotator a string', broken((f) => (f.pipelineJobs[0]!.logRotator = '10')), 'pipelineJobs[0].logRotator: expected object'],
  ['numToKeep a fraction', broken((f) => (f.pipelineJobs[0]!.logRotator = { numToKeep: 1.5 })), 'pipelineJobs[0].logRotator.numToKeep: expected int'],
  ['daysToKeep zero', broken((f) => (f.pipelineJobs[0]!.logRotator = { daysToKeep: 0 })), 'pipelineJobs[0].logRotator.daysToKeep: Too small'],
  ['daysToKeep beyond a Java int', broken((f) => (f.pipelineJobs[0]!.logRotator = { daysToKeep: 10000000000 })), 'pipelineJobs[0].logRotator.daysToKeep: must be at most 2147483647 (Jenkins keeps a 32-bit number and would mangle a larger one); use null for unlimited'],
  ['numToKeep of 2^31', broken((f) => (f.multiBranchJobs[0]!.logRotator = { numToKeep: 2147483648 })), 'multiBranchJobs[0].logRotator.numToKeep: must be at most 2147483647'],
  ['a cron with a no-break space', broken((f) => (f.pipelineJobs[0]!.cronTrigger = 'H\u00a02 * * *')), 'pipelineJobs[0].cronTrigger: invalid cron: contains U+00A0 (a no-break space)'],
  ['an empty branch scan schedule', broken((f) => (f.multiBranchJobs[0]!.git = { ...(f.multiBranchJobs[0]!.git as object), repositoryTrigger: '' })), 'multiBranchJobs[0].git.repositoryTrigger: invalid cron: empty cron spec'],
  ['a cron with four fields', broken((f) => (f.pipelineJobs[0]!.cronTrigger = 'H 2 * *')), 'pipelineJobs[0].cronTrigger: invalid cron: expected 5 fields'],
  ['a cron hour of 24', broken((f) => (f.pipelineJobs[0]!.cronTrigger = '0 24 * * *')), 'pipelineJobs[0].cronTrigger: invalid cron: hour: 24 is outside 0-23'],
  ['a bad H range', broken((f) => (git(f).repositoryTrigger = 'H(30-10) * * * *')), 'pipelineJobs[0].git.repositoryTrigger: invalid cron: minute: range 30-10 runs backwards'],
  ['an unknown cron alias', broken((f) => (f.pipelineJobs[0]!.cronTrigger = '@fortnightly')), 'pipelineJobs[0].cronTrigger: invalid cron: unknown alias @fortnightly'],
  ['a bad UUID', broken((f) => (f.pipelineJobs[0]!.remoteTriggerUuid = 'not-a-uuid')), 'pipelineJobs[0].remoteTriggerUuid: must be a UUID'],
  ['a jobName with a forbidden character', broken((f) => (f.pipelineJobs[0]!.jobName = 'build?now')), 'pipelineJobs[0].jobName: invalid job name: "?" is not allowed'],
  ['a jobName with an empty folder', broken((f) => (f.pipelineJobs[0]!.jobName = 'team//build')), 'pipelineJobs[0].jobName: invalid job name: segment "": must not be blank'],
  ['a jobName of ..', broken((f) => (f.pipelineJobs[0]!.jobName = '..')), 'pipelineJobs[0].jobName: invalid job name: ".." is not allowed'],
  ['a jobName over 255 characters', broken((f) => (f.pipelineJobs[0]!.jobName = 'x'.repeat(256))), 'pipelineJobs[0].jobName: invalid job name: longer than 255 characters'],
  ['a view name with a slash', broken((f) => (f.pipelineJobs[0]!.view = 'a/b')), 'pipelineJobs[0].view: invalid view name: "/" is not allowed'],
  ['a duplicate name across both arrays', broken((f) => (f.multiBranchJobs[0]!.jobName = 'build')), 'pipelineJobs[0].jobName: duplicate job name "build" (also multiBranchJobs[0])'],
  ['a job that is also a folder', broken((f) => (f.multiBranchJobs[0]!.jobName = 'build/app')), 'multiBranchJobs[0].jobName: "build" is a job'],
  ['an unknown key in a job (a typo)', broken((f) => (f.pipelineJobs[0]!.cronTriger = 'H * * * *')), 'pipelineJobs[0].cronTriger: unknown field (did you mean cronTrigger?)'],
  ['an unknown key in git', broken((f) => (git(f).branch = 'main')), 'pipelineJobs[0].git.branch: unknown field'],
  ['an unknown key in logRotator', broken((f) => (f.pipelineJobs[0]!.logRotator = { artifactNumToKeep: 3 })), 'pipelineJobs[0].logRotator.artifactNumToKeep: unknown field'],
  ['cronTrigger on a multibranch job', broken((f) => (f.multiBranchJobs[0]!.cronTrigger = 'H * * * *')), 'multiBranchJobs[0].cronTrigger: applies to pipeline jobs only'],
  ['a control character XML cannot hold', broken((f) => (f.pipelineJobs[0]!.jobDescription = 'ring \u0007 bell')), 'pipelineJobs[0].jobDescription: contains U+0007, which XML cannot hold'],
  ['a lone surrogate', broken((f) => (git(f).repositoryUrl = 'https://git.example.com/\ud800.git')), 'pipelineJobs[0].git.repositoryUrl: contains U+D800, which XML cannot hold'],
  ['remoteBranchName on a multibranch job', broken((f) => (f.multiBranchJobs[0]!.remoteBranchName = 'main')), 'multiBranchJobs[0].remoteBranchName: applies to pipeline jobs only'],
];

let jenkins: JenkinsSimulator;
let files: Awaited<ReturnType<typeof scratch>>;
beforeAll(async () => {
  jenkins = await startJenkins();
  files = await scratch();
});
afterAll(async () => {
  await jenkins.stop();
  await files.cleanup();
});

describe('invalid definition files', () => {
  // The control: each variant fails for its one change, not for something wrong with the file it starts from.
  it('the file every variant is made from is valid: exit 0, nothing sent', async () => {
    const path = await files.write('jenkins-dsl-jobs.json', ok());
    const run = await repoadmin(['jobs', 'validate', path], { env: jenkinsEnv(jenkins) });
    expect(run.code, run.stderr).toBe(0);
    expect(jenkins.log).toEqual([]);
  });

  it.each(CASES)('%s: exit 1, the JSON path, nothing sent', async (_name, content, message) => {
    const path = await files.write('jenkins-dsl-jobs.json', content);
    for (const verb of ['validate', 'apply', 'diff']) {
      const run = await repoadmin(['jobs', verb, path, '--yes'].slice(0, verb === 'apply' ? 4 : 3), { env: jenkinsEnv(jenkins) });
      expect(run.code, `${verb}: ${run.stderr}`).toBe(1);
      expect(run.stderr).toContain(`${path}: ${message}`);
      expect(run.stdout).toBe('');
    }
    expect(jenkins.log).toEqual([]);
  });

  it('reports every problem of a file in one run', async () => {
    const path = await files.write(
      'jenkins-dsl-jobs.json',
      broken((f) => {
        delete git(f).repositoryUrl;
        f.pipelineJobs[0]!.cronTrigger = '61 * * * *';
        f.multiBranchJobs[0]!.remoteTriggerUuid = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
      }),
    );
    const run = await repoadmin(['jobs', 'validate', path]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${path} has 3 problems; nothing was sent to Jenkins`);
    expect(run.stderr).toContain(`${path}: pipelineJobs[0].git.repositoryUrl: required`);
    expect(run.stderr).toContain(`${path}: pipelineJobs[0].cronTrigger: invalid cron: minute: 61 is outside 0-59`);
    expect(run.stderr).toContain(`${path}: multiBranchJobs[0].remoteTriggerUuid: applies to pipeline jobs only`);
  });

  it('refuses a file of another build server, naming the supported ones', async () => {
    const path = await files.write('gitlab-dsl-jobs.json', ok());
    const run = await repoadmin(['jobs', 'validate', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unsupported build server "gitlab"');
    expect(run.stderr).toContain('supported: jenkins');
    expect((await repoadmin(['jobs', 'validate', path, '--ci', 'jenkins'])).code).toBe(0);
  });
});
