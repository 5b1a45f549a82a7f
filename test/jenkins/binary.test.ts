// The built bin/repoadmin against the simulator: a seed job's step as a real process.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshHome, run } from '../cli/run.js';
import { commitFiles } from './git.js';
import { pipelineJob, scratch, startJenkins, TOKEN, USER } from './harness.js';
import type { JenkinsSimulator } from './simulator.js';

let jenkins: JenkinsSimulator;
let files: Awaited<ReturnType<typeof scratch>>;
let home: string;

beforeAll(async () => {
  assertBuilt();
  jenkins = await startJenkins();
  files = await scratch();
  home = await freshHome();
});
afterAll(async () => {
  await jenkins.stop();
  await files.cleanup();
});

const env = () => ({ JENKINS_URL: jenkins.url, JENKINS_USER: USER, JENKINS_API_TOKEN: TOKEN });

describe('bin/repoadmin jobs', () => {
  it('validates, diffs (exit 6), applies, and diffs again (exit 0)', async () => {
    const path = await files.write('jenkins-dsl-jobs.json', { pipelineJobs: [pipelineJob('team/build', { view: 'Team' })] });
    const valid = await run(['jobs', 'validate', path], { home });
    expect(valid.code).toBe(0);
    expect(valid.stdout).toContain('valid: 1 pipeline, 0 multibranch jobs, 1 folders, 1 views');

    const diff = await run(['jobs', 'diff', path], { home, env: env() });
    expect(diff).toMatchObject({ code: 6, stderr: '' });
    expect(diff.stdout).toBe('+ create folder team\n+ create job team/build\n+ create view Team\n');

    const apply = await run(['jobs', 'apply', path], { home, env: env() });
    expect(apply.stderr).toBe('');
    expect(apply).toMatchObject({ code: 0, stdout: 'created folder team\ncreated job team/build\ncreated view Team\nsummary: 3 created, 0 unchanged, 0 failed\n' });
    expect(jenkins.viewJobs('Team')).toEqual(['team/build']);

    const again = await run(['jobs', 'diff', path, '--json'], { home, env: env() });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ changes: false, counts: { unchanged: 2 } });
  });

  it('without a file takes the one <ci>-dsl-jobs.json of the current folder; none or several is a usage error naming what is there', async () => {
    const folder = await scratch();
    try {
      const empty = await run(['jobs', 'validate'], { home, cwd: folder.dir });
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain('no <ci>-dsl-jobs.json in the current folder: give <file> or --git URL');

      await folder.write('jobs.json', {});
      const other = await run(['jobs', 'validate'], { home, cwd: folder.dir });
      expect(other.code).toBe(2);
      expect(other.stderr).toContain('no <ci>-dsl-jobs.json in the current folder (JSON files there: jobs.json)');

      await folder.write('jenkins-dsl-jobs.json', { pipelineJobs: [pipelineJob('here')] });
      const valid = await run(['jobs', 'validate'], { home, cwd: folder.dir });
      expect(valid.code).toBe(0);
      expect(valid.stdout).toContain('jenkins-dsl-jobs.json: valid: 1 pipeline');
      // The other commands share the operand, so the default too.
      const rendered = await run(['jobs', 'render'], { home, cwd: folder.dir });
      expect(rendered.code).toBe(0);
      expect(rendered.stdout).toContain('<flow-definition');
      const diff = await run(['jobs', 'diff'], { home, cwd: folder.dir, env: env() });
      expect(diff).toMatchObject({ code: 6, stdout: '+ create job here\n' });

      await folder.write('other-dsl-jobs.json', {});
      const several = await run(['jobs', 'validate'], { home, cwd: folder.dir });
      expect(several.code).toBe(2);
      expect(several.stderr).toContain('several definition files in the current folder (jenkins-dsl-jobs.json, other-dsl-jobs.json): give one as <file>');
    } finally {
      await folder.cleanup();
    }
  });

  it('applies from a file:// repository with --git, and refuses deletions without --yes', async () => {
    const repo = join(files.dir, 'repo');
    await commitFiles(repo, 'main', { 'jenkins-dsl-jobs.json': { pipelineJobs: [pipelineJob('seeded'), pipelineJob('kept')] } });
    const apply = await run(['jobs', 'apply', '--git', `file://${repo}`, '--source', 'seed'], { home, env: env() });
    expect(apply.code).toBe(0);
    expect(jenkins.item('seeded')).toBeDefined();

    const fewer = await files.write('jenkins-dsl-jobs.json', { pipelineJobs: [pipelineJob('kept')] });
    const refused = await run(['jobs', 'apply', fewer, '--source', 'seed'], { home, env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --yes');
    expect(jenkins.item('seeded')).toBeDefined();
  });
});
