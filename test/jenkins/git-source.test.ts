// `--git URL [--ref] [--path]`: the file read from a shallow fetch of a local file:// repository,
// and the source id that names it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git } from './git.js';
import { jenkinsEnv, pipelineJob, repoadmin, scratch, startJenkins } from './harness.js';
import type { JenkinsSimulator } from './simulator.js';

let jenkins: JenkinsSimulator;
let files: Awaited<ReturnType<typeof scratch>>;
let repo: string;

beforeAll(async () => {
  jenkins = await startJenkins();
  files = await scratch();
  repo = join(files.dir, 'jobs-repo');
  await commitFiles(repo, 'main', { 'ci/jenkins-dsl-jobs.json': { pipelineJobs: [pipelineJob('from-main')] } });
  await commitFiles(repo, 'next', { 'ci/jenkins-dsl-jobs.json': { pipelineJobs: [pipelineJob('from-main'), pipelineJob('from-next')] } });
  git(repo, 'checkout', '-q', 'main');
});
afterAll(async () => {
  await jenkins.stop();
  await files.cleanup();
});

describe('jobs --git', () => {
  it('diffs and applies the file of a ref, marking the jobs with the repository address and path', async () => {
    const url = `file://${repo}`;
    const diff = await repoadmin(['jobs', 'diff', '--git', url, '--path', 'ci/jenkins-dsl-jobs.json'], { env: jenkinsEnv(jenkins) });
    expect(diff.stderr).toBe('');
    expect(diff.code).toBe(6);
    expect(diff.stdout).toBe('+ create job from-main\n');

    const apply = await repoadmin(['jobs', 'apply', '--git', url, '--ref', 'next', '--path', 'ci/jenkins-dsl-jobs.json'], { env: jenkinsEnv(jenkins) });
    expect(apply.code).toBe(0);
    expect(jenkins.fullNames().sort()).toEqual(['from-main', 'from-next']);
    expect(jenkins.item('from-next')?.xml).toContain(`Managed by repoadmin from ci/jenkins-dsl-jobs.json@${repo} (item from-next)`);

    // The same file from a working copy whose origin is that repository is the same source.
    const clone = join(files.dir, 'clone');
    git(files.dir, 'clone', '-q', '--branch', 'next', url, clone);
    const local = await repoadmin(['jobs', 'diff', join(clone, 'ci/jenkins-dsl-jobs.json')], { env: jenkinsEnv(jenkins) });
    expect(local.code).toBe(0);
    expect(local.stdout).toBe('= unchanged job from-main\n= unchanged job from-next\n');
  });

  it('names a missing ref or file (exit 3) and an unreachable repository (exit 5)', async () => {
    const url = `file://${repo}`;
    const noRef = await repoadmin(['jobs', 'validate', '--git', url, '--ref', 'nope'], {});
    expect(noRef.code).toBe(3);
    expect(noRef.stderr).toContain(`cannot fetch ${url} at nope`);
    const noFile = await repoadmin(['jobs', 'validate', '--git', url], {});
    expect(noFile.code).toBe(3);
    expect(noFile.stderr).toContain('jenkins-dsl-jobs.json is not in');
    const nowhere = await repoadmin(['jobs', 'validate', '--git', 'https://user:secret@127.0.0.1:1/x.git'], {});
    expect(nowhere.code).toBe(5);
    expect(nowhere.stderr).not.toContain('secret');
  });
});
