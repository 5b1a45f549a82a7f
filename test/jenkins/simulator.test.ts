// The simulator behaves as Jenkins does for what `repoadmin jobs` relies on; checked over HTTP.
import { afterEach, describe, expect, it } from 'vitest';
import { itemsTree } from '../../cli/jenkins/client.js';
import { TOKEN, USER, startJenkins } from './harness.js';
import { JenkinsSimulator, parseTree, xstreamInt } from './simulator.js';

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
    // Older Jenkins gives back the stored file: the elements in the order they were sent.
    jenkins = await startJenkins({ csrf: 'off', release: 'older' });
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

  // Current Jenkins re-serialises the live WorkflowJob: Job's fields before WorkflowJob's, and
  // `disabled`, a primitive field, written although the config left it out.
  it('returns configs re-serialised from the live object in the current release: field order and defaults', async () => {
    jenkins = await startJenkins({ csrf: 'off', release: 'current' });
    await post('/createItem?name=a', {}, PIPELINE);
    const xml = await (await fetch(`${jenkins.url}/job/a/config.xml`)).text();
    expect(xml).toBe(
      "<?xml version='1.1' encoding='UTF-8'?>\n" +
        '<flow-definition plugin="workflow-job@1436.vfa_244484591f">\n' +
        '  <description>d</description>\n' +
        '  <keepDependencies>false</keepDependencies>\n' +
        '  <properties>\n' +
        '    <b/>\n' +
        '    <a>\n' +
        '      <x>1</x>\n' +
        '    </a>\n' +
        '  </properties>\n' +
        '  <disabled>false</disabled>\n' +
        '</flow-definition>\n',
    );
  });

  it('adds LogRotator.removeLastBuild in the current release, and not in the older one', async () => {
    const rotated = '<flow-definition><properties><jenkins.model.BuildDiscarderProperty><strategy class="hudson.tasks.LogRotator"><daysToKeep>10</daysToKeep><numToKeep>5</numToKeep><artifactDaysToKeep>-1</artifactDaysToKeep><artifactNumToKeep>-1</artifactNumToKeep></strategy></jenkins.model.BuildDiscarderProperty></properties></flow-definition>';
    for (const release of ['older', 'current'] as const) {
      jenkins = await startJenkins({ csrf: 'off', release });
      await post('/createItem?name=a', {}, rotated);
      const xml = await (await fetch(`${jenkins.url}/job/a/config.xml`)).text();
      if (release === 'current') expect(xml).toMatch(/<artifactNumToKeep>-1<\/artifactNumToKeep>\n\s+<removeLastBuild>false<\/removeLastBuild>\n/);
      else expect(xml).not.toContain('removeLastBuild');
      await jenkins.stop();
    }
  });

  it('reads integers as XStream does: 2^31..2^32-1 wrap to negative, larger ones fail and leave 0', async () => {
    expect([xstreamInt('10'), xstreamInt('-1'), xstreamInt('2147483647')]).toEqual([10, -1, 2147483647]);
    expect([xstreamInt('2147483648'), xstreamInt('4294967295')]).toEqual([-2147483648, -1]);
    expect([xstreamInt('4294967296'), xstreamInt('10000000000'), xstreamInt('99999999999999999999'), xstreamInt('ten')]).toEqual([undefined, undefined, undefined, undefined]);
    jenkins = await startJenkins({ csrf: 'off', release: 'current' });
    const rotated = (days: string) =>
      `<flow-definition><properties><jenkins.model.BuildDiscarderProperty><strategy class="hudson.tasks.LogRotator"><daysToKeep>${days}</daysToKeep><numToKeep>3000000000</numToKeep></strategy></jenkins.model.BuildDiscarderProperty></properties></flow-definition>`;
    expect((await post('/createItem?name=a', {}, rotated('10000000000'))).status).toBe(200);
    const xml = await (await fetch(`${jenkins.url}/job/a/config.xml`)).text();
    expect(xml).toContain('<daysToKeep>0</daysToKeep>');
    expect(xml).toContain('<numToKeep>-1294967296</numToKeep>');
  });

  it('drops a trigger whose spec the cron lexer cannot read, and answers 200', async () => {
    jenkins = await startJenkins({ csrf: 'off', release: 'current' });
    const triggers = (spec: string) =>
      `<flow-definition><properties><org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty><triggers><hudson.triggers.TimerTrigger><spec>${spec}</spec></hudson.triggers.TimerTrigger><hudson.triggers.SCMTrigger><spec></spec></hudson.triggers.SCMTrigger></triggers></org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty></properties></flow-definition>`;
    expect((await post('/createItem?name=a', {}, triggers('H\u00a02 * * *'))).status).toBe(200);
    const xml = await (await fetch(`${jenkins.url}/job/a/config.xml`)).text();
    expect(xml).not.toContain('TimerTrigger');
    expect(xml).toContain('SCMTrigger');
    expect((await post('/createItem?name=b', {}, triggers('TZ=Europe/Berlin\n# nightly\nH 2 * * *'))).status).toBe(200);
    expect(await (await fetch(`${jenkins.url}/job/b/config.xml`)).text()).toContain('TimerTrigger');
  });

  // hudson.util.Secret: `{base64}` of version 1, IV and AES-CBC data, a fresh IV each time.
  it('gives the trigger token back encrypted in the current release, differently on each read, and still triggers with it', async () => {
    jenkins = await startJenkins({ csrf: 'off', release: 'current' });
    const token = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    await post('/createItem?name=a', {}, `<flow-definition><authToken>${token}</authToken></flow-definition>`);
    const read = async () => /<authToken>([^<]*)<\/authToken>/.exec(await (await fetch(`${jenkins.url}/job/a/config.xml`)).text())?.[1];
    const [first, second] = [await read(), await read()];
    expect(first).toMatch(/^\{AQAAABAAAAA[A-Za-z0-9+/]+={0,2}\}$/);
    expect(second).not.toBe(first);
    expect(jenkins.decrypt(first!)).toBe(token);
    expect(jenkins.item('a')?.xml).toContain(`<authToken>${token}</authToken>`);

    // A config sent back as it was read keeps the token it encrypts.
    await post('/job/a/config.xml', {}, `<flow-definition><authToken>${second}</authToken></flow-definition>`);
    expect(jenkins.item('a')?.xml).toContain(`<authToken>${token}</authToken>`);

    expect((await fetch(`${jenkins.url}/job/a/build?token=${token}`)).status).toBe(201);
    expect((await fetch(`${jenkins.url}/job/a/build?token=wrong`)).status).toBe(403);
    expect((await fetch(`${jenkins.url}/job/a/build`)).status).toBe(405);
    expect(jenkins.builds('a')).toBe(1);
  });

  it('gives the trigger token back as stored in the older release', async () => {
    jenkins = await startJenkins({ csrf: 'off', release: 'older' });
    await post('/createItem?name=a', {}, '<flow-definition><authToken>t-1</authToken></flow-definition>');
    expect(await (await fetch(`${jenkins.url}/job/a/config.xml`)).text()).toContain('<authToken>t-1</authToken>');
    expect((await fetch(`${jenkins.url}/job/a/build?token=t-1`)).status).toBe(201);
  });

  // Jetty decodes a body read with getReader() as ISO-8859-1 when the request names no charset;
  // createItem hands the bytes to the XML parser, which reads the declaration.
  it('reads update bodies in the request charset, ISO-8859-1 by default, and createItem bodies by their declaration', async () => {
    jenkins = await startJenkins({ csrf: 'off' });
    const job = (description: string, encoding = 'UTF-8') =>
      `<?xml version="1.0" encoding="${encoding}"?><flow-definition><description>${description}</description></flow-definition>`;
    const text = 'Größe – 日本語 ✓';
    const send = (path: string, body: string | Buffer, contentType: string) =>
      fetch(`${jenkins.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : new Blob([new Uint8Array(body)]) });
    expect((await send('/createItem?name=a', job(text), 'application/xml')).status).toBe(200);
    expect(jenkins.item('a')?.xml).toContain(`<description>${text}</description>`);

    expect((await send('/job/a/config.xml', job(text), 'application/xml')).status).toBe(200);
    expect(jenkins.item('a')?.xml).toContain(`<description>${Buffer.from(text, 'utf8').toString('latin1')}</description>`);

    expect((await send('/job/a/config.xml', job(text), 'application/xml; charset=UTF-8')).status).toBe(200);
    expect(jenkins.item('a')?.xml).toContain(`<description>${text}</description>`);

    const latin = Buffer.from(job('Größe', 'ISO-8859-1'), 'latin1');
    expect((await send('/createItem?name=b', latin, 'application/xml')).status).toBe(200);
    expect(jenkins.item('b')?.xml).toContain('<description>Größe</description>');
  });

  it('redirects every request when told to, as a proxy or a missing context path does', async () => {
    jenkins = await startJenkins({ redirectTo: 'https://ci.example.com/jenkins' });
    const response = await fetch(`${jenkins.url}/api/json?tree=jobs[name]`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://ci.example.com/jenkins/api/json?tree=jobs[name]');
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
