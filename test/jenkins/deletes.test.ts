// Deletes as Jenkins does them (a job with a running build takes up to 15 s), an apply cut short
// and run again, and the answers that are not what they seem: a redirect on delete to a sign-in
// page, an HTML page where JSON was asked for, a crumb issuer that failed once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jenkinsEnv, pipelineJob, repoadmin, scratch, startJenkins } from './harness.js';
import { STOP_BUILDS_WAIT_MS, type JenkinsSimulator } from './simulator.js';

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

const SOURCE = 'jenkins-dsl-jobs.json@git.example.com/team/jobs';

async function run(verb: 'diff' | 'apply', content: unknown, flags: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const path = await files.write('jenkins-dsl-jobs.json', content);
  return repoadmin(['jobs', verb, path, '--source', SOURCE, ...flags], { env: jenkinsEnv(jenkins, env) });
}

const both = { pipelineJobs: [pipelineJob('build', { view: 'Builds' }), pipelineJob('drop', { view: 'Builds' })] };
const one = { pipelineJobs: [pipelineJob('build', { view: 'Builds' })] };

describe('deletes and answers that are not what they seem', () => {
  it('waits for a delete that takes 15 s (a running build), longer than the request timeout, and says so', { timeout: 60_000 }, async () => {
    expect((await run('apply', both)).code).toBe(0);
    jenkins.startRunningBuild('drop', STOP_BUILDS_WAIT_MS);
    const apply = await run('apply', one, ['--yes'], { REPOADMIN_TIMEOUT: '5' });
    expect(apply.stderr).toContain("waiting for Jenkins to delete job drop: it stops the job's running builds first");
    expect(apply.code).toBe(0);
    expect(apply.stdout).toMatch(/deleted job drop \(Jenkins took 1[45] s to delete it\)/);
    expect(jenkins.item('drop')).toBeUndefined();
  });

  it('completes the plan on a rerun after an apply cut short between the delete and the create of a replace', async () => {
    expect((await run('apply', both)).code).toBe(0);
    const multibranch = { pipelineJobs: [pipelineJob('build', { view: 'Builds' })], multiBranchJobs: [pipelineJob('drop', { view: 'Builds' })] };
    jenkins.failOn('POST', /^\/createItem\?name=drop$/, 500, { times: 1 });
    const cut = await run('apply', multibranch, ['--replace', '--yes']);
    expect(cut.code).toBe(1);
    expect(jenkins.item('drop')).toBeUndefined();

    const rerun = await run('apply', multibranch, ['--yes']);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toContain('created job drop');
    expect(jenkins.item('drop')?.className).toBe('org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject');
    expect(jenkins.viewJobs('Builds')).toEqual(['build', 'drop']);
    expect((await run('diff', multibranch)).code).toBe(0);
  });

  it('takes a delete redirected to a sign-in page for a failure: the job is still there', async () => {
    expect((await run('apply', both)).code).toBe(0);
    jenkins.failOn('POST', /^\/job\/drop\/doDelete$/, 302, { headers: { location: `${jenkins.url}/login?from=%2Fjob%2Fdrop%2FdoDelete` } });
    const apply = await run('apply', one, ['--yes']);
    expect(apply.code).not.toBe(0);
    expect(apply.stdout).toContain('failed job drop: Jenkins at');
    expect(apply.stdout).toContain('a sign-in page');
    expect(jenkins.item('drop')).toBeDefined();
  });

  it('says what an HTML page answered instead of JSON means (exit 5), not a parse error', async () => {
    jenkins.failOn('GET', /^\/api\/json/, 200, { headers: { 'content-type': 'text/html;charset=utf-8' }, body: '<html><body>Sign in</body></html>' });
    const diff = await run('diff', one);
    expect(diff.code).toBe(5);
    expect(diff.stderr).toContain('with text/html, not JSON: is --jenkins-url (or JENKINS_URL) the address of Jenkins itself');
    expect(diff.stderr).not.toMatch(/Unexpected token|SyntaxError/);
  });

  it('asks for a crumb again after a failed fetch instead of failing every write of the run', async () => {
    jenkins.failOn('GET', /^\/crumbIssuer\/api\/json$/, 500, { times: 1 });
    const apply = await run('apply', { pipelineJobs: [pipelineJob('build'), pipelineJob('report')] }, ['--concurrency', '1']);
    expect(apply.code).toBe(1);
    expect(apply.stdout).toMatch(/failed job build: Jenkins refused to fetch a CSRF crumb \(HTTP 500/);
    expect(apply.stdout).toContain('created job report');
    expect(jenkins.item('report')).toBeDefined();
  });
});
