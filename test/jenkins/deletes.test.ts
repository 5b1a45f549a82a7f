// Deletes as Jenkins does them (a job with a running build takes up to 15 s), an apply cut short
// and run again, and the answers that are not what they seem: a redirect on delete to a sign-in
// page, an HTML page where JSON was asked for, a crumb issuer that failed once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJenkinsClient } from '../../cli/jenkins/client.js';
import { jenkinsEnv, pipelineJob, repoadmin, scratch, startJenkins, TOKEN, USER } from './harness.js';
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

/** A doDelete of an apply that is then cut short: sent with a crumb and its session, answer never read. */
async function startDelete(jenkins: JenkinsSimulator, name: string, signal: AbortSignal): Promise<void> {
  const authorization = `Basic ${Buffer.from(`${USER}:${TOKEN}`).toString('base64')}`;
  const issued = await fetch(`${jenkins.url}/crumbIssuer/api/json`, { headers: { authorization } });
  const { crumb, crumbRequestField } = (await issued.json()) as { crumb: string; crumbRequestField: string };
  const cookie = issued.headers.getSetCookie()[0]!.split(';')[0]!;
  await fetch(`${jenkins.url}/job/${name}/doDelete`, { method: 'POST', headers: { authorization, cookie, [crumbRequestField]: crumb }, signal }).catch(() => undefined);
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

const both = { pipelineJobs: [pipelineJob('build', { view: 'Builds' }), pipelineJob('drop', { view: 'Builds' })] };
const one = { pipelineJobs: [pipelineJob('build', { view: 'Builds' })] };

describe('deletes and answers that are not what they seem', () => {
  it('waits for a delete that takes 15 s (a running build), longer than the request timeout, and says so', async () => {
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

  // The seed job was aborted while Jenkins stopped the builds of a replaced job: the delete goes
  // on in Jenkins, which refuses a second one (400 "... is currently being deleted") until done.
  it('completes the plan on a rerun started while Jenkins still finishes the delete of an apply cut short', async () => {
    expect((await run('apply', both)).code).toBe(0);
    const multibranch = { pipelineJobs: [pipelineJob('build', { view: 'Builds' })], multiBranchJobs: [pipelineJob('drop', { view: 'Builds' })] };
    jenkins.startRunningBuild('drop', 5_000);
    const cut = new AbortController();
    const first = startDelete(jenkins, 'drop', cut.signal);
    await until(() => jenkins.item('drop')?.deleting === true);
    cut.abort();
    await first;

    const rerun = await run('apply', multibranch, ['--replace', '--yes']);
    expect(rerun.stdout).toContain('replaced job drop');
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toContain('waiting for Jenkins to delete job drop');
    expect(jenkins.item('drop')?.className).toBe('org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject');
    expect(jenkins.viewJobs('Builds')).toEqual(['build', 'drop']);
    expect((await run('diff', multibranch)).code).toBe(0);
  });

  it('gives a delete up after its bound, whether Jenkins is slow to answer it or busy with another, saying it may go on', async () => {
    expect((await run('apply', both)).code).toBe(0);
    jenkins.startRunningBuild('drop');
    const client = createJenkinsClient({ url: jenkins.url, user: USER, token: TOKEN, timeoutMs: 500, deleteWaitMs: 1_500 });
    const slow = await client.deleteJob('drop').catch((error: unknown) => error);
    expect(slow).toMatchObject({ code: 'unreachable', message: 'Jenkins has not finished deleting job drop after 2 s and may still be at it: run apply again to complete the plan' });
    expect(jenkins.item('drop')?.deleting).toBe(true);
    // Given up within its bound (1.5 s, and a pause of at most 1 s between tries), not when
    // Jenkins' own delete ends, which fails after 15 s here.
    const started = Date.now();
    const busy = await client.deleteJob('drop').catch((error: unknown) => error);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(busy).toMatchObject({ code: 'unreachable', message: 'Jenkins has not finished deleting job drop after 2 s and may still be at it: run apply again to complete the plan' });
    expect(jenkins.posts().filter((p) => p.path === '/job/drop/doDelete' && p.status === 400).length).toBeGreaterThan(0);
  });

  it('takes a delete redirected to a sign-in page for a failure: the job is still there', async () => {
    expect((await run('apply', both)).code).toBe(0);
    jenkins.failOn('POST', /^\/job\/drop\/doDelete$/, 302, { headers: { location: `${jenkins.url}/login?from=%2Fjob%2Fdrop%2FdoDelete` } });
    const apply = await run('apply', one, ['--yes']);
    expect(apply.code).toBe(1);
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
