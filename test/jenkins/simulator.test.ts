// The simulator behaves as Jenkins does for what `repoadmin jobs` relies on; checked over HTTP.
import { afterEach, describe, expect, it } from 'vitest';
import { itemsTree } from '../../cli/jobs/client.js';
import { TOKEN, USER, startJenkins } from './harness.js';
import { JenkinsSimulator, parseTree } from './simulator.js';

const PIPELINE = '<flow-definition><description>d</description><properties><b/><a><x>1</x></a></properties><keepDependencies>false</keepDependencies></flow-definition>';
const FOLDER = '<com.cloudbees.hudson.plugins.folder.Folder><description/></com.cloudbees.hudson.plugins.folder.Folder>';
const MULTIBRANCH = '<org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject/>';

const auth = { authorization: `Basic ${Buffer.from(`${USER}:${TOKEN}`).toString('base64')}` };

let jenkins: JenkinsSimulator;
afterEach(async () => jenkins?.stop());

/** A crumb and the session cookie it belongs to. */
async function session(): Promise<Record<string, string>> {
  const response = await fetch(`${jenkins.url}/crumbIssuer/api/json`, { headers: auth });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { crumb: string; crumbRequestField: string };
  const cookie = response.headers.getSetCookie()[0]!.split(';')[0]!;
  return { ...auth, [body.crumbRequestField]: body.crumb, cookie };
}

async function post(path: string, headers: Record<string, string>, body?: string): Promise<Response> {
  return fetch(`${jenkins.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/xml', ...headers }, body, redirect: 'manual' });
}

describe('Jenkins simulator', () => {
  it('requires a crumb bound to the session in CSRF mode: 403 without, or with another session', async () => {
    jenkins = await startJenkins();
    expect((await post('/createItem?name=a', auth, PIPELINE)).status).toBe(403);
    const headers = await session();
    const other = await session();
    expect((await post('/createItem?name=a', { ...headers, cookie: other.cookie! }, PIPELINE)).status).toBe(403);
    expect((await post('/createItem?name=a', headers, PIPELINE)).status).toBe(200);
    expect(jenkins.item('a')?.className).toBe('org.jenkinsci.plugins.workflow.job.WorkflowJob');
  });

  it('answers 404 from the crumb issuer without CSRF protection, and takes POSTs without a crumb', async () => {
    jenkins = await startJenkins({ csrf: 'off', users: { [USER]: TOKEN } });
    expect((await fetch(`${jenkins.url}/crumbIssuer/api/json`, { headers: auth })).status).toBe(404);
    expect((await post('/createItem?name=a', auth, PIPELINE)).status).toBe(200);
  });

  it('checks basic auth: 401 for a wrong token, 403 for anonymous', async () => {
    jenkins = await startJenkins();
    const wrong = { authorization: `Basic ${Buffer.from(`${USER}:nope`).toString('base64')}` };
    expect((await fetch(`${jenkins.url}/api/json`, { headers: wrong })).status).toBe(401);
    expect((await fetch(`${jenkins.url}/api/json`)).status).toBe(403);
    expect((await fetch(`${jenkins.url}/api/json`, { headers: auth })).status).toBe(200);
  });

  it('answers 400 when creating an existing name, and 404 for a missing folder or job', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    expect((await post('/createItem?name=a', {}, PIPELINE)).status).toBe(200);
    const again = await post('/createItem?name=a', {}, PIPELINE);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('already exists');
    expect((await post('/job/missing/createItem?name=b', {}, PIPELINE)).status).toBe(404);
    expect((await fetch(`${jenkins.url}/job/missing/config.xml`)).status).toBe(404);
    expect((await post('/job/missing/doDelete', {})).status).toBe(404);
  });

  // Jenkins and folders keep items in a map ordered by String.CASE_INSENSITIVE_ORDER, and
  // Jenkins.checkGoodName refuses control characters and (SECURITY-2424) a trailing dot.
  it('treats item names without regard to case, and refuses the names checkGoodName refuses', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    expect((await post('/createItem?name=team', {}, FOLDER)).status).toBe(200);
    expect((await post('/createItem?name=Team', {}, PIPELINE)).status).toBe(400);
    expect((await post('/job/TEAM/createItem?name=app', {}, PIPELINE)).status).toBe(200);
    expect((await fetch(`${jenkins.url}/job/Team/job/APP/config.xml`)).status).toBe(200);
    expect(jenkins.item('TEAM/App')).toBeDefined();
    expect((await post('/createItem?name=a%09b', {}, PIPELINE)).status).toBe(400);
    expect((await post('/createItem?name=app.', {}, PIPELINE)).status).toBe(400);
    expect((await post('/job/team/job/App/doDelete', {})).status).toBe(302);
    expect(jenkins.fullNames()).toEqual(['team']);
  });

  it('takes createItem only in a plain folder: a multibranch project computes its items', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    expect((await post('/createItem?name=app', {}, MULTIBRANCH)).status).toBe(200);
    expect((await post('/job/app/createItem?name=x', {}, PIPELINE)).status).toBe(404);
    expect(jenkins.fullNames()).toEqual(['app']);
  });

  it('creates items in folders at /job/F/createItem and serves them at /job/F/job/N', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    expect((await post('/createItem?name=team', {}, FOLDER)).status).toBe(200);
    expect((await post('/job/team/createItem?name=app', {}, PIPELINE)).status).toBe(200);
    expect((await fetch(`${jenkins.url}/job/team/job/app/config.xml`)).status).toBe(200);
    expect(jenkins.fullNames()).toEqual(['team', 'team/app']);
    expect((await post('/job/team/job/app/doDelete', {})).status).toBe(302);
    expect(jenkins.fullNames()).toEqual(['team']);
  });

  it('refuses an update that changes the item class', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    await post('/createItem?name=a', {}, PIPELINE);
    const response = await post('/job/a/config.xml', {}, MULTIBRANCH);
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/Expecting class .*WorkflowJob but got class .*WorkflowMultiBranchProject/);
    expect(jenkins.item('a')?.className).toBe('org.jenkinsci.plugins.workflow.job.WorkflowJob');
  });

  it('returns configs as Jenkins writes them: XML 1.1 header, plugin attributes, two-space indent, its own property order', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    await post('/createItem?name=a', {}, PIPELINE);
    const xml = await (await fetch(`${jenkins.url}/job/a/config.xml`)).text();
    expect(xml).toBe(
      "<?xml version='1.1' encoding='UTF-8'?>\n" +
        '<flow-definition plugin="workflow-job@1436.vfa_244484591f">\n' +
        '  <description>d</description>\n' +
        '  <properties>\n' +
        '    <b/>\n' +
        '    <a>\n' +
        '      <x>1</x>\n' +
        '    </a>\n' +
        '  </properties>\n' +
        '  <keepDependencies>false</keepDependencies>\n' +
        '</flow-definition>\n',
    );
  });

  it('serves views: createView, config.xml, doDelete, 400 for an existing name', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    const view = '<hudson.model.ListView><name>V</name><description>mine</description><jobNames><string>a</string></jobNames></hudson.model.ListView>';
    expect((await post('/createView?name=V', {}, view)).status).toBe(200);
    expect((await post('/createView?name=V', {}, view)).status).toBe(400);
    expect(jenkins.viewJobs('V')).toEqual(['a']);
    expect((await post('/view/V/config.xml', {}, view.replace('<string>a</string>', '<string>b</string>'))).status).toBe(200);
    expect(await (await fetch(`${jenkins.url}/view/V/config.xml`)).text()).toContain('<string>b</string>');
    expect((await post('/view/V/doDelete', {})).status).toBe(302);
    expect((await fetch(`${jenkins.url}/view/V/config.xml`)).status).toBe(404);
  });

  it('exports only the fields asked for with tree=, recursing into folders', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    await post('/createItem?name=team', {}, FOLDER);
    await post('/job/team/createItem?name=app', {}, PIPELINE);
    const response = await fetch(`${jenkins.url}/api/json?tree=${encodeURIComponent(itemsTree(2))}`);
    expect(await response.json()).toEqual({
      _class: 'hudson.model.Hudson',
      jobs: [
        {
          _class: 'com.cloudbees.hudson.plugins.folder.Folder',
          name: 'team',
          fullName: 'team',
          description: null,
          jobs: [{ _class: 'org.jenkinsci.plugins.workflow.job.WorkflowJob', name: 'app', fullName: 'team/app', description: 'd' }],
        },
      ],
    });
    const views = await (await fetch(`${jenkins.url}/api/json?tree=views[name]`)).json();
    expect(views).toEqual({ _class: 'hudson.model.Hudson', views: [{ _class: 'hudson.model.AllView', name: 'all' }] });
  });

  it('reads nested tree expressions', () => {
    expect(parseTree('jobs[name,jobs[name]],views[name]')).toEqual(
      new Map<string, unknown>([
        ['jobs', new Map<string, unknown>([['name', null], ['jobs', new Map([['name', null]])]])],
        ['views', new Map([['name', null]])],
      ]),
    );
  });
});
