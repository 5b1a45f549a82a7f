// On a terminal the jobs commands colour their lines and show results as a table; piped, the
// same plain lines as before (sync.test.ts and binary.test.ts check those exactly).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jenkinsEnv, pipelineJob, repoadmin, scratch, startJenkins } from './harness.js';
import type { JenkinsSimulator } from './simulator.js';

let jenkins: JenkinsSimulator;
let files: Awaited<ReturnType<typeof scratch>>;
beforeEach(async () => {
  jenkins = await startJenkins();
  files = await scratch();
});
afterEach(async () => {
  await jenkins.stop();
  await files.cleanup();
});

const ESC = '\u001b[';
const plain = (text: string) => text.replaceAll(/\u001b\[[0-9;]*m/g, '');

describe('jobs output on a terminal', () => {
  it('apply: a table of results and a summary; diff: coloured lines and diffs', async () => {
    const path = await files.write('jenkins-dsl-jobs.json', { pipelineJobs: [pipelineJob('build', { view: 'Builds' })] });
    const env = jenkinsEnv(jenkins);
    const apply = await repoadmin(['jobs', 'apply', path, '--source', 's'], { env, tty: true });
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain(ESC);
    expect(plain(apply.stdout).split('\n')).toEqual([
      expect.stringMatching(/^RESULT\s+KIND\s+NAME\s+ERROR$/),
      expect.stringMatching(/^created\s+job\s+build$/),
      expect.stringMatching(/^created\s+view\s+Builds$/),
      'summary: 2 created, 0 unchanged, 0 failed',
      '',
    ]);

    await files.write('jenkins-dsl-jobs.json', { pipelineJobs: [pipelineJob('build', { view: 'Builds', pipelineScriptPath: 'ci/Jenkinsfile' })] });
    const diff = await repoadmin(['jobs', 'diff', path, '--source', 's'], { env, tty: true });
    expect(diff.code).toBe(6);
    expect(diff.stdout).toContain(`${ESC}33m~ update job build`);
    expect(diff.stdout).toMatch(/\u001b\[32m\+\s+<scriptPath>ci\/Jenkinsfile<\/scriptPath>/);
    expect(plain(diff.stdout)).toContain('= unchanged view Builds');

    const noColor = await repoadmin(['jobs', 'diff', path, '--source', 's', '--no-color'], { env, tty: true });
    expect(noColor.stdout).not.toContain(ESC);
    expect(noColor.stdout).toBe(plain(diff.stdout));
  });
});
