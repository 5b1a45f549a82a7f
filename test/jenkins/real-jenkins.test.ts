// What a real Jenkins does that a naive one would not (docs/jobs.md, "What a real Jenkins does that a naive simulator misses"), end to end through
// `repoadmin jobs` against the simulator, once per Jenkins release (vitest.config.ts): settled
// diffs, text that survives, trigger tokens, redirects.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jenkinsEnv, pipelineJob, RELEASE, repoadmin, scratch, startJenkins, TOKEN, USER } from './harness.js';
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

const SOURCE = 'jenkins-dsl-jobs.json@git.example.com/team/jobs';
const OLD_TOKEN = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const NEW_TOKEN = '9b2c1d7e-5a4f-4e3b-8c2d-1f0e9d8c7b6a';
const UNICODE = 'Größe – 日本語 ✓';

async function run(verb: 'diff' | 'apply', content: unknown, ...flags: string[]) {
  const path = await files.write('jenkins-dsl-jobs.json', content);
  return repoadmin(['jobs', verb, path, '--source', SOURCE, ...flags], { env: jenkinsEnv(jenkins) });
}

/** The description Jenkins holds for a top-level job, as its API gives it. */
async function liveDescription(name: string): Promise<string | undefined> {
  const auth = { authorization: `Basic ${Buffer.from(`${USER}:${TOKEN}`).toString('base64')}` };
  const response = await fetch(`${jenkins.url}/api/json?tree=jobs[name,description]`, { headers: auth });
  const body = (await response.json()) as { jobs: { name: string; description: string }[] };
  return body.jobs.find((job) => job.name === name)?.description;
}

/** Starts a build with the remote trigger; the HTTP status says whether the token was taken. */
async function trigger(name: string, token: string): Promise<number> {
  const auth = { authorization: `Basic ${Buffer.from(`${USER}:${TOKEN}`).toString('base64')}` };
  return (await fetch(`${jenkins.url}/job/${encodeURIComponent(name)}/build?token=${token}`, { headers: auth, redirect: 'manual' })).status;
}

const file = (jobs: Record<string, unknown>[]) => ({ pipelineJobs: jobs });

describe(`jobs against ${RELEASE} Jenkins`, () => {
  it('settles: after apply, diff exits 0 and a second apply sends nothing, for a token and the default log rotator', async () => {
    const content = file([pipelineJob('deploy', { remoteTriggerUuid: OLD_TOKEN, view: 'Ops' }), pipelineJob('plain')]);
    expect((await run('apply', content)).code).toBe(0);
    const diff = await run('diff', content);
    expect(diff.stdout).toBe('= unchanged job deploy\n= unchanged job plain\n= unchanged view Ops\n');
    expect(diff.code).toBe(0);
    const mark = jenkins.log.length;
    const again = await run('apply', content);
    expect(again).toMatchObject({ code: 0, stdout: 'summary: 3 unchanged, 0 failed\n', stderr: '' });
    expect(jenkins.log.slice(mark).filter((request) => request.method === 'POST')).toEqual([]);
  });

  it('keeps non-ASCII text byte for byte in a job name and description, on create and on update', async () => {
    const job = pipelineJob(UNICODE, { jobDescription: UNICODE, view: UNICODE });
    expect((await run('apply', file([job]))).code).toBe(0);
    expect(jenkins.fullNames()).toEqual([UNICODE]);
    expect(await liveDescription(UNICODE)).toBe(`${UNICODE}\nManaged by repoadmin from ${SOURCE} (item ${UNICODE}): edits made in Jenkins are overwritten by the next apply.`);
    expect(jenkins.viewJobs(UNICODE)).toEqual([UNICODE]);

    const edited = { ...job, jobDescription: `${UNICODE} (2)` };
    const apply = await run('apply', file([edited]));
    expect(apply.stdout).toContain(`updated job ${UNICODE}`);
    expect(await liveDescription(UNICODE)).toBe(`${UNICODE} (2)\nManaged by repoadmin from ${SOURCE} (item ${UNICODE}): edits made in Jenkins are overwritten by the next apply.`);
    expect(Buffer.from(jenkins.item(UNICODE)!.xml, 'utf8').includes(Buffer.from(`${UNICODE} (2)`, 'utf8'))).toBe(true);
    expect((await run('diff', file([edited]))).code).toBe(0);
    expect(jenkins.viewJobs(UNICODE)).toEqual([UNICODE]);
  });

  it('sees a changed remoteTriggerUuid as an update: the new token triggers the job, the old one no longer does', async () => {
    expect((await run('apply', file([pipelineJob('deploy', { remoteTriggerUuid: OLD_TOKEN })]))).code).toBe(0);
    expect(await trigger('deploy', OLD_TOKEN)).toBe(201);

    const changed = file([pipelineJob('deploy', { remoteTriggerUuid: NEW_TOKEN })]);
    const diff = await run('diff', changed);
    expect(diff.code).toBe(6);
    expect(diff.stdout).toMatch(/^~ update job deploy$/m);
    expect(diff.stdout).toMatch(/^-\s+<authToken>\*{4}[0-9a-f]{6}<\/authToken>$/m);
    expect(diff.stdout).toMatch(/^\+\s+<authToken>\*{4}[0-9a-f]{6}<\/authToken>$/m);

    const apply = await run('apply', changed);
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('updated job deploy');
    expect(await trigger('deploy', NEW_TOKEN)).toBe(201);
    expect(await trigger('deploy', OLD_TOKEN)).toBe(403);
    expect(jenkins.builds('deploy')).toBe(2);
    expect((await run('diff', changed)).code).toBe(0);

    const removed = await run('apply', file([pipelineJob('deploy')]));
    expect(removed.stdout).toContain('updated job deploy');
    expect(await trigger('deploy', NEW_TOKEN)).toBe(403);
  });

  it('never prints a trigger token, in diff, apply, --json or --verbose', async () => {
    const first = file([pipelineJob('deploy', { remoteTriggerUuid: OLD_TOKEN })]);
    const second = file([pipelineJob('deploy', { remoteTriggerUuid: NEW_TOKEN })]);
    const runs = [
      await run('diff', first),
      await run('apply', first, '--verbose'),
      await run('diff', second),
      await run('diff', second, '--json'),
      await run('apply', second, '--dry-run', '--verbose'),
      await run('apply', second, '--json'),
    ];
    for (const output of runs) {
      for (const secret of [OLD_TOKEN, NEW_TOKEN, OLD_TOKEN.slice(0, 8), NEW_TOKEN.slice(0, 8)]) {
        expect(output.stdout).not.toContain(secret);
        expect(output.stderr).not.toContain(secret);
      }
    }
  });

  it('sees a hand edit of a job with a token, and apply overwrites it', async () => {
    const content = file([pipelineJob('deploy', { remoteTriggerUuid: OLD_TOKEN })]);
    await run('apply', content);
    jenkins.editConfig('deploy', (xml) => xml.replace('<numToKeep>5</numToKeep>', '<numToKeep>50</numToKeep>'));
    const diff = await run('diff', content);
    expect(diff.code).toBe(6);
    expect(diff.stdout).toMatch(/^-\s+<numToKeep>50<\/numToKeep>$/m);
    expect(diff.stdout).toMatch(/^\+\s+<numToKeep>5<\/numToKeep>$/m);
    expect(diff.stdout).not.toMatch(/authToken/);
    expect((await run('apply', content)).code).toBe(0);
    expect(jenkins.item('deploy')?.xml).toContain('<numToKeep>5</numToKeep>');
    expect(await trigger('deploy', OLD_TOKEN)).toBe(201);
    expect((await run('diff', content)).code).toBe(0);
  });

  it('a pipeline job without remoteBranchName builds any branch: ** without a lightweight checkout', async () => {
    await run('apply', file([pipelineJob('any'), pipelineJob('main', { remoteBranchName: 'main' })]));
    expect(jenkins.item('any')?.xml).toMatch(/<name>\*\*<\/name>[\s\S]*<lightweight>false<\/lightweight>/);
    expect(jenkins.item('main')?.xml).toMatch(/<name>\*\/main<\/name>[\s\S]*<lightweight>true<\/lightweight>/);
  });

  it('names the address to use when the Jenkins URL redirects, with exit 5', async () => {
    const proxy = await startJenkins({ redirectTo: `${jenkins.url}/` });
    try {
      const path = await files.write('jenkins-dsl-jobs.json', file([pipelineJob('deploy')]));
      const diff = await repoadmin(['jobs', 'diff', path, '--source', SOURCE], { env: { ...jenkinsEnv(jenkins), JENKINS_URL: proxy.url } });
      expect(diff.code).toBe(5);
      expect(diff.stderr).toBe(`error: Jenkins at ${proxy.url} redirects (HTTP 302) to ${jenkins.url}: pass --jenkins-url ${jenkins.url} or set JENKINS_URL to it\n`);
      expect(jenkins.log).toEqual([]);
    } finally {
      await proxy.stop();
    }
  });
});
