// `repoadmin jobs diff` and `apply` end to end through main(argv, deps) against the simulator:
// exit codes, stdout, stderr and what Jenkins holds afterwards.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scriptedPrompter } from '../cli/fakes.js';
import { jenkinsEnv, multibranchJob, pipelineJob, RELEASE, repoadmin, scratch, startJenkins, TOKEN, USER } from './harness.js';
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

const base = () => ({
  pipelineJobs: [
    pipelineJob('build', { view: 'Builds', cronTrigger: 'H 2 * * *' }),
    pipelineJob('team/deploy', { view: 'Builds', remoteTriggerUuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' }),
    pipelineJob('report', { view: 'Reports' }),
  ],
  multiBranchJobs: [multibranchJob('team/app', { view: 'Builds' })],
});

async function file(content: unknown = base()): Promise<string> {
  return files.write('jenkins-dsl-jobs.json', content);
}

async function run(verb: 'diff' | 'apply', path: string, ...flags: string[]) {
  return repoadmin(['jobs', verb, path, '--source', SOURCE, ...flags], { env: jenkinsEnv(jenkins) });
}

const owned = (description: string) => `<flow-definition><description>${description}</description></flow-definition>`;

describe('jobs apply and diff against Jenkins', () => {
  it('creates everything on the first apply, and changes nothing on the second (zero POSTs)', async () => {
    const path = await file();
    const first = await run('apply', path);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('created folder team');
    expect(first.stdout).toContain('created job team/app');
    expect(first.stdout).toContain('summary: 7 created, 0 unchanged, 0 failed');
    expect(jenkins.fullNames().sort()).toEqual(['build', 'report', 'team', 'team/app', 'team/deploy']);
    expect(jenkins.item('team/app')?.className).toBe('org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject');
    expect(jenkins.viewJobs('Builds')).toEqual(['build', 'team/app', 'team/deploy']);
    expect(jenkins.viewJobs('Reports')).toEqual(['report']);

    const postsBefore = jenkins.posts().length;
    const second = await run('apply', path);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('summary: 6 unchanged, 0 failed\n');
    expect(jenkins.posts().length).toBe(postsBefore);

    const diff = await run('diff', path);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('= unchanged job build');
    expect(diff.stdout).toContain('= unchanged view Builds');
  });

  // An XML parser reads a CR LF line end as LF (XML 1.0, 2.11), so Jenkins holds LF alone.
  it('changes nothing on a second apply when a description has CR LF line ends', async () => {
    const content = base();
    (content.pipelineJobs[0] as { jobDescription?: string }).jobDescription = 'Nightly build.\r\nOwner: team';
    const path = await file(content);
    expect((await run('apply', path)).code).toBe(0);
    const postsBefore = jenkins.posts().length;
    const second = await run('apply', path);
    expect(second.stdout).toBe('summary: 6 unchanged, 0 failed\n');
    expect(jenkins.posts().length).toBe(postsBefore);
  });

  // ListView.jobNames is a TreeSet ordered by String.compareToIgnoreCase, which Jenkins writes
  // back in that order: `app-x` (45) before `app.x` (46) before `App1` before `app_x` (95).
  it('changes nothing on a second apply when view job names sort by character code', async () => {
    const content = { pipelineJobs: ['app_x', 'App1', 'app.x', 'app-x', 'ab'].map((name) => pipelineJob(name, { view: 'Apps' })) };
    const path = await file(content);
    expect((await run('apply', path)).code).toBe(0);
    expect(jenkins.viewJobs('Apps')).toEqual(['ab', 'app-x', 'app.x', 'App1', 'app_x']);
    const postsBefore = jenkins.posts().length;
    const second = await run('apply', path);
    expect(second.stdout).toBe('summary: 6 unchanged, 0 failed\n');
    expect(jenkins.posts().length).toBe(postsBefore);
  });

  it('updates exactly the edited job', async () => {
    const content = base();
    await run('apply', await file(content));
    (content.pipelineJobs[2] as { pipelineScriptPath: string }).pipelineScriptPath = 'ci/report.Jenkinsfile';
    const path = await file(content);

    const diff = await run('diff', path);
    expect(diff.code).toBe(6);
    expect(diff.stderr).toBe('');
    expect(diff.stdout).toContain('~ update job report');
    expect(diff.stdout).toContain('-    <scriptPath>Jenkinsfile</scriptPath>');
    expect(diff.stdout).toContain('+    <scriptPath>ci/report.Jenkinsfile</scriptPath>');
    expect(diff.stdout.match(/^~ /gm)).toHaveLength(1);

    const mark = jenkins.log.length;
    const dryRun = await run('apply', path, '--dry-run');
    expect(dryRun).toMatchObject({ code: 6, stdout: diff.stdout });
    expect(jenkins.log.slice(mark).filter((r) => r.method === 'POST')).toEqual([]);

    const apply = await run('apply', path);
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('updated job report');
    expect(jenkins.log.slice(mark).filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/job/report/config.xml']);
    expect(jenkins.item('report')?.xml).toContain('<scriptPath>ci/report.Jenkinsfile</scriptPath>');
  });

  // Mutation this catches: report.ts not counting deletions as changes (diff then exits 0).
  it('exits 6 from diff when the only changes are deletions', async () => {
    const content = base();
    await run('apply', await file(content));
    content.pipelineJobs.splice(2, 1);
    const diff = await run('diff', await file(content));
    expect(diff.stdout).toContain('- delete job report');
    expect(diff.stdout).not.toMatch(/^[+~] /m);
    expect(diff.code).toBe(6);
    expect((await run('apply', await file(content), '--dry-run')).code).toBe(6);
  });

  it('deletes a job removed from the file, leaving hand-made jobs and other sources alone', async () => {
    jenkins.seed('handmade', owned('made by hand'));
    jenkins.seed('other-team', owned('theirs\n&lt;!-- managed by repoadmin; source: other.json@git.example.com/other --&gt;'));
    const content = base();
    await run('apply', await file(content));
    content.pipelineJobs.splice(2, 1);
    const apply = await run('apply', await file(content), '--yes');
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('deleted job report');
    expect(apply.stdout).toContain('deleted view Reports');
    expect(jenkins.fullNames().sort()).toEqual(['build', 'handmade', 'other-team', 'team', 'team/app', 'team/deploy']);
  });

  // SCMTrigger with no schedule: Jenkins polls only when a post-commit hook (the git plugin's
  // notifyCommit) asks, which is how webhook-only polling is configured.
  it('takes an empty polling spec: an SCM trigger without a schedule, settled on the next apply', async () => {
    const content = { pipelineJobs: [pipelineJob('hooked', { git: { repositoryId: 'hooked', repositoryUrl: 'https://git.example.com/team/hooked.git', repositoryTrigger: '' } })] };
    expect((await run('apply', await file(content))).code).toBe(0);
    expect(jenkins.item('hooked')?.xml).toMatch(/<hudson\.triggers\.SCMTrigger>\s*<spec\s*\/?>(<\/spec>)?/);
    expect(await run('apply', await file(content))).toMatchObject({ code: 0, stdout: 'summary: 1 unchanged, 0 failed\n' });
  });

  it('finds a job as deep as a name may go again on the next apply', async () => {
    const deep = { pipelineJobs: [pipelineJob('a/b/c/d/e/f/g/h/deepest')] };
    expect((await run('apply', await file(deep))).code).toBe(0);
    const again = await run('apply', await file(deep));
    expect(again).toMatchObject({ code: 0, stdout: 'summary: 1 unchanged, 0 failed\n' });
  });

  // New Item -> "Copy from" copies config.xml byte for byte (ItemGroupMixIn.copy), marker included.
  it('never deletes a copy of one of its jobs made in Jenkins, and refuses to take it over without --adopt', async () => {
    const content = base();
    await run('apply', await file(content));
    jenkins.seed('copy-of-build', jenkins.item('build')!.xml);
    const again = await run('apply', await file(content), '--yes');
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain('copy-of-build');
    expect(jenkins.item('copy-of-build')).toBeDefined();

    content.pipelineJobs.push(pipelineJob('copy-of-build'));
    const claim = await run('apply', await file(content), '--yes');
    expect(claim.stdout).toMatch(/failed job copy-of-build: refused: its marker is that of build \(a copy made in Jenkins\?\); pass --adopt to take it over/);
  });

  it('still owns a job whose marker was written before markers named their item, and rewrites it', async () => {
    const legacy = (name: string) => owned(`&lt;!-- managed by repoadmin; source: ${SOURCE} --&gt;`).replace('<flow-definition>', `<flow-definition><!-- ${name} -->`);
    await run('apply', await file());
    jenkins.seed('gone', legacy('gone'));
    const apply = await run('apply', await file(), '--yes');
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toContain('deleted job gone');
    jenkins.seed('report', legacy('report'));
    const rewrite = await run('apply', await file(), '--yes');
    expect(rewrite.stdout).toContain('updated job report');
    expect(jenkins.item('report')?.xml).toContain(`Managed by repoadmin from ${SOURCE} (item report): edits made in Jenkins are overwritten by the next apply.`);
  });

  // Jenkins item names ignore case: `Report` in the file is the job `report` Jenkins holds.
  it('updates a job whose name changed only in case, never deleting it', async () => {
    const content = base();
    await run('apply', await file(content));
    (content.pipelineJobs[2] as { jobName: string }).jobName = 'Report';
    (content.pipelineJobs[2] as { jobDescription?: string }).jobDescription = 'renamed';
    const apply = await run('apply', await file(content), '--yes');
    expect(apply.stderr).toBe('');
    expect(apply.code).toBe(0);
    expect(apply.stdout).not.toContain('delete');
    expect(apply.stdout).toContain('updated job Report');
    expect(jenkins.item('report')?.xml).toContain('renamed');
    const again = await run('diff', await file(content));
    expect(again.code).toBe(0);
  });

  it('moves a job between views: it leaves the old view, and an emptied view of ours is deleted', async () => {
    jenkins.seed('handmade', owned('made by hand'));
    const content = base();
    await run('apply', await file(content));
    // A view a person made, empty: never ours to delete.
    const handView = '<hudson.model.ListView><name>Mine</name><jobNames/></hudson.model.ListView>';
    jenkins.views.set('Mine', { className: 'hudson.model.ListView', xml: handView });

    (content.pipelineJobs[2] as { view: string }).view = 'Builds';
    const apply = await run('apply', await file(content), '--yes');
    expect(apply.code).toBe(0);
    expect(jenkins.viewJobs('Builds')).toEqual(['build', 'report', 'team/app', 'team/deploy']);
    expect(jenkins.views.has('Reports')).toBe(false);
    expect(jenkins.views.has('Mine')).toBe(true);
    expect(jenkins.views.has('all')).toBe(true);

    (content.pipelineJobs[0] as { view: string }).view = 'Nightly';
    await run('apply', await file(content), '--yes');
    expect(jenkins.viewJobs('Builds')).toEqual(['report', 'team/app', 'team/deploy']);
    expect(jenkins.viewJobs('Nightly')).toEqual(['build']);
  });

  it('sees a hand edit in Jenkins in diff, with credentials and tokens masked, and apply overwrites it', async () => {
    const content = base();
    (content.pipelineJobs[1] as { git: Record<string, string> }).git.credentialsId = 'secret-credential-id';
    const path = await file(content);
    await run('apply', path);
    jenkins.editConfig('team/deploy', (xml) =>
      xml
        .replace('<scriptPath>Jenkinsfile</scriptPath>', '<scriptPath>hacked</scriptPath>')
        .replace('secret-credential-id', 'other-credential-id')
        .replace('3f2504e0-4f89-41d3-9a0c-0305e82c3301', 'hand-set-token'),
    );

    const diff = await run('diff', path);
    expect(diff.code).toBe(6);
    expect(diff.stdout).toContain('~ update job team/deploy');
    expect(diff.stdout).toContain('-    <scriptPath>hacked</scriptPath>');
    expect(diff.stdout).toContain('+    <scriptPath>Jenkinsfile</scriptPath>');
    expect(diff.stdout).toMatch(/^-\s+<credentialsId>\*{4}[0-9a-f]{6}<\/credentialsId>$/m);
    expect(diff.stdout).toMatch(/^\+\s+<credentialsId>\*{4}[0-9a-f]{6}<\/credentialsId>$/m);
    // Older Jenkins gives the token back as stored, so a token set by hand shows; current Jenkins
    // gives it back encrypted, and only the fingerprint in our marker tells which token we wrote.
    if (RELEASE === 'older') expect(diff.stdout).toMatch(/^-\s+<authToken>\*{4}[0-9a-f]{6}<\/authToken>$/m);
    for (const secret of ['secret-credential-id', 'other-credential-id', 'hand-set-token', '3f2504e0']) expect(diff.stdout).not.toContain(secret);

    const json = await repoadmin(['jobs', 'diff', path, '--source', SOURCE, '--json'], { env: jenkinsEnv(jenkins) });
    expect(json.code).toBe(6);
    const data = JSON.parse(json.stdout);
    expect(data.changes).toBe(true);
    expect(data.counts).toMatchObject({ update: 1, unchanged: 5 });
    expect(data.items.find((i: { name: string }) => i.name === 'team/deploy')).toMatchObject({ kind: 'job', action: 'update' });
    expect(json.stdout).not.toContain('hand-set-token');

    expect((await run('apply', path)).code).toBe(0);
    expect(jenkins.item('team/deploy')?.xml).toContain('<scriptPath>Jenkinsfile</scriptPath>');
    expect(jenkins.item('team/deploy')?.xml).toContain('secret-credential-id');
    expect(jenkins.item('team/deploy')?.xml).toContain('<authToken>3f2504e0-4f89-41d3-9a0c-0305e82c3301</authToken>');
    expect((await run('diff', path)).code).toBe(0);
  });

  it('refuses {} without --allow-empty, and sends nothing', async () => {
    await run('apply', await file());
    const mark = jenkins.posts().length;
    const empty = await file({});
    // diff says so too, even with --quiet: a script that checks before it applies must see it.
    const quiet = await run('diff', empty, '--quiet');
    expect(quiet.stderr).toContain('warning: apply would refuse: this file would delete every job of source');
    const refused = await run('apply', empty, '--yes');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('would delete every job of source');
    expect(refused.stderr).toContain('--allow-empty');
    expect(jenkins.posts().length).toBe(mark);

    const allowed = await run('apply', empty, '--yes', '--allow-empty');
    expect(allowed.code).toBe(0);
    expect(jenkins.fullNames()).toEqual(['team']);
    expect([...jenkins.views.keys()]).toEqual(['all']);
  });

  it('refuses a foreign job of the same name without --adopt, and still creates the rest', async () => {
    jenkins.seed('build', owned('made by hand'));
    const path = await file();
    const refused = await run('apply', path);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('failed job build: refused: it exists and was not made by repoadmin; pass --adopt');
    expect(refused.stderr).toMatch(/error: 1 of \d+ items failed: job build/);
    expect(jenkins.item('build')?.xml).toContain('made by hand');
    expect(jenkins.item('report')).toBeDefined();

    const diff = await run('diff', path);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('! refused job build');

    const adopted = await run('apply', path, '--adopt');
    expect(adopted.code).toBe(0);
    expect(jenkins.item('build')?.xml).toContain(`Managed by repoadmin from ${SOURCE} (item build)`);
    expect(jenkins.viewJobs('Builds')).toContain('build');
  });

  it('refuses a job type change without --replace; --replace recreates it', async () => {
    const content = base();
    await run('apply', await file(content));
    const report = content.pipelineJobs.splice(2, 1)[0]!;
    content.multiBranchJobs.push({ ...report });
    const path = await file(content);

    const refused = await run('apply', path, '--yes');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('failed job report: refused: it is a WorkflowJob and the file wants a multibranch job; pass --replace');
    expect(jenkins.item('report')?.className).toBe('org.jenkinsci.plugins.workflow.job.WorkflowJob');

    const offTerminal = await run('apply', path, '--replace');
    expect(offTerminal.code).toBe(2);

    const plan = await run('diff', path, '--replace');
    expect(plan.stdout).toContain('~ update view Reports (posted again: Jenkins drops report from it when replacing)');

    const replaced = await run('apply', path, '--replace', '--yes');
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toContain('replaced job report');
    expect(jenkins.item('report')?.className).toBe('org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject');
    // Jenkins took the deleted job out of its view (ListView.Listener.onDeleted); the view was posted again.
    expect(jenkins.viewJobs('Reports')).toEqual(['report']);
    expect((await run('diff', path)).code).toBe(0);
  });

  it('keeps the views of a job refused for its type: a refusal deletes nothing', async () => {
    const content = base();
    await run('apply', await file(content));
    const report = content.pipelineJobs.splice(2, 1)[0]!;
    content.multiBranchJobs.push({ ...report });
    const refused = await run('apply', await file(content));
    expect(refused.stderr).not.toContain('--yes');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('failed job report: refused: it is a WorkflowJob');
    expect(refused.stdout).not.toMatch(/^deleted /m);
    expect(jenkins.viewJobs('Reports')).toEqual(['report']);
  });

  // A multibranch project holds items but computes them: only a plain folder takes createItem.
  it('refuses a job whose folder is a multibranch project', async () => {
    jenkins.seed('team', '<org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject><description>theirs</description></org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject>');
    const content = { pipelineJobs: [pipelineJob('team/deploy'), pipelineJob('build')] };
    const apply = await run('apply', await file(content));
    expect(apply.code).toBe(1);
    expect(apply.stdout).toContain('failed folder team: refused: team exists and is not a folder');
    expect(apply.stdout).toContain('failed job team/deploy: refused: its folder team exists and is not a folder');
    expect(apply.stdout).toContain('created job build');
    expect(jenkins.fullNames().sort()).toEqual(['build', 'team']);
  });

  it('takes a write redirected to a sign-in page for what it is: nothing done, a failure, no address to switch to', async () => {
    jenkins.failOn('POST', /^\/createItem\?name=build$/, 302, { headers: { location: 'https://sso.example.com/oauth2/start?rd=%2FcreateItem' } });
    const apply = await run('apply', await file(), '--concurrency', '1');
    expect(apply.code).not.toBe(0);
    expect(apply.stdout).toMatch(/failed job build: Jenkins at .* sends \/createItem \(HTTP 302\) to https:\/\/sso\.example\.com\/oauth2\/start, a sign-in page or a proxy's: nothing was done/);
    expect(apply.stdout).not.toContain('--jenkins-url https://sso');
    expect(jenkins.item('build')).toBeUndefined();
  });

  it('tries a read again after a 503, as a restarting Jenkins or its proxy answers', async () => {
    jenkins.failOn('GET', /^\/api\/json/, 503, { times: 1 });
    const plan = await run('diff', await file());
    expect(plan.stderr).not.toContain('503');
    expect(plan.code).toBe(6);
    expect(jenkins.log.filter((r) => r.method === 'GET' && r.path.startsWith('/api/json')).map((r) => r.status)).toContain(503);
  });

  it('goes on when one job fails, lists the failure, and exits 1', async () => {
    jenkins.failOn('POST', /^\/createItem\?name=build$/, 500);
    const apply = await run('apply', await file(), '--concurrency', '2');
    expect(apply.code).toBe(1);
    expect(apply.stdout).toMatch(/failed job build: Jenkins refused to create build \(HTTP 500/);
    expect(apply.stdout).toContain('created job report');
    expect(apply.stdout).toContain('created job team/app');
    expect(apply.stdout).toContain('created view Builds');
    expect(apply.stdout).toContain('1 failed');
    expect(apply.stderr).toContain('error: 1 of');
    expect(jenkins.fullNames().sort()).toEqual(['report', 'team', 'team/app', 'team/deploy']);
    expect(jenkins.viewJobs('Builds')).toEqual(['build', 'team/app', 'team/deploy']);
  });

  it('refuses deletions without --yes off a terminal, and asks on one', async () => {
    const content = base();
    await run('apply', await file(content));
    content.pipelineJobs.pop();
    const path = await file(content);
    const mark = jenkins.posts().length;

    const refused = await run('apply', path);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --yes');
    expect(refused.stderr).toContain('- delete job report');
    expect(jenkins.posts().length).toBe(mark);

    const no = scriptedPrompter([{ confirm: false }]);
    const declined = await repoadmin(['jobs', 'apply', path, '--source', SOURCE], { env: jenkinsEnv(jenkins), tty: true, prompter: no });
    expect(declined.code).toBe(1);
    expect(no.asked[0]).toContain('Delete 2 item(s)');
    expect(jenkins.posts().length).toBe(mark);

    const yes = scriptedPrompter([{ confirm: true }]);
    const confirmed = await repoadmin(['jobs', 'apply', path, '--source', SOURCE], { env: jenkinsEnv(jenkins), tty: true, prompter: yes });
    expect(confirmed.code).toBe(0);
    expect(confirmed.stderr).toMatch(/\[\d\/\d\] deleted job report/);
    expect(jenkins.item('report')).toBeUndefined();
  });

  it('works without CSRF protection (crumb issuer 404) and with the token on stdin', async () => {
    await jenkins.stop();
    jenkins = await startJenkins({ csrf: 'off', users: { [USER]: TOKEN } });
    const env = { JENKINS_URL: jenkins.url };
    const apply = await repoadmin(['jobs', 'apply', await file(), '--jenkins-user', USER, '--jenkins-token-stdin'], { env, stdin: `${TOKEN}\n` });
    expect(apply.code).toBe(0);
    expect(jenkins.fullNames()).toContain('team/deploy');
    expect(jenkins.log.find((r) => r.path === '/crumbIssuer/api/json')?.status).toBe(404);
  });

  // Mutation this catches: a hard-coded `Jenkins-Crumb` header instead of the issuer's crumbRequestField.
  it('sends the crumb in the header the crumb issuer names, not a fixed one', async () => {
    await jenkins.stop();
    jenkins = await startJenkins({ csrf: 'strict', users: { [USER]: TOKEN }, crumbRequestField: '.crumb' });
    const apply = await run('apply', await file());
    expect(apply.stderr).toBe('');
    expect(apply.code).toBe(0);
    expect(jenkins.fullNames()).toContain('team/deploy');
    expect(jenkins.posts().every((r) => r.status < 400)).toBe(true);
  });

  it('maps Jenkins failures to the exit codes of docs/cli.md', async () => {
    const path = await file();
    const wrongToken = await repoadmin(['jobs', 'diff', path], { env: { ...jenkinsEnv(jenkins), JENKINS_API_TOKEN: 'wrong' } });
    expect(wrongToken.code).toBe(4);
    expect(wrongToken.stderr).toContain('HTTP 401');
    expect(wrongToken.stderr).toContain('JENKINS_API_TOKEN');

    const noUrl = await repoadmin(['jobs', 'diff', path], { env: {} });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('JENKINS_URL');

    // The shared HTTP core: a TLS failure says what it means, and REPOADMIN_TIMEOUT is checked.
    const tls = await repoadmin(['jobs', 'diff', path], { env: { ...jenkinsEnv(jenkins), JENKINS_URL: jenkins.url.replace('http:', 'https:') } });
    expect(tls.code).toBe(5);
    expect(tls.stderr).toMatch(/cannot reach Jenkins at https:\/\/127\.0\.0\.1:\d+ \((EPROTO|ERR_SSL_WRONG_VERSION_NUMBER)\): no TLS on the other side/);

    const badTimeout = await repoadmin(['jobs', 'diff', path], { env: { ...jenkinsEnv(jenkins), REPOADMIN_TIMEOUT: 'soon' } });
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr).toContain('REPOADMIN_TIMEOUT must be a number of seconds');

    const url = jenkins.url;
    await jenkins.stop();
    const down = await repoadmin(['jobs', 'diff', path], { env: { JENKINS_URL: url } });
    expect(down.code).toBe(5);
    expect(down.stderr).toContain('cannot reach Jenkins');
    jenkins = await startJenkins();
  });
});
