// The planner against the simulator, without the command line: what each item of a plan says
// (action, reason, config, diff) where the commands only print it. Views of a file whose jobs are
// refused, views we did not make, replaced jobs, and the labels of diffs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DOMParser } from '@xmldom/xmldom';
import { createJenkinsClient, type JenkinsClient } from '../../cli/jenkins/client.js';
import { executePlan } from '../../cli/jenkins/execute.js';
import { parseDefinitions } from '../../cli/jenkins/model.js';
import { desiredItems, isChange, planSync, type Plan, type PlanItem, type PlanOptions } from '../../cli/jenkins/plan.js';
import { withMarker } from '../../cli/jenkins/source.js';
import { pipelineJob, startJenkins, TOKEN, USER } from './harness.js';
import { jenkinsXml, type JenkinsSimulator } from './simulator.js';

const SOURCE = 'jenkins-dsl-jobs.json@git.example.com/team/jobs';
const OTHER = 'jenkins-dsl-jobs.json@git.example.com/other/jobs';

let jenkins: JenkinsSimulator;
let client: JenkinsClient;

beforeEach(async () => {
  jenkins = await startJenkins();
  client = createJenkinsClient({ url: jenkins.url, user: USER, token: TOKEN });
});
afterEach(async () => {
  await jenkins.stop();
});

const definitions = (file: unknown) => parseDefinitions(JSON.stringify(file), 'jenkins-dsl-jobs.json', {});

function plan(file: unknown, options: Partial<PlanOptions> = {}): Promise<Plan> {
  return planSync(definitions(file), client, { sourceId: SOURCE, adopt: false, replace: false, allowEmpty: false, concurrency: 2, ...options });
}

async function apply(file: unknown, options: Partial<PlanOptions> = {}): Promise<void> {
  const results = await executePlan(await plan(file, options), client, { concurrency: 2 });
  expect(results.filter((r) => !r.ok)).toEqual([]);
}

function item(of: Plan, kind: PlanItem['kind'], name: string): PlanItem | undefined {
  return of.items.find((i) => i.kind === kind && i.name === name);
}

/** The job names and the description of a list view's config. */
function listView(xml: string | undefined): { jobs: string[]; description: string } {
  const root = new DOMParser().parseFromString(xml ?? '', 'text/xml').documentElement!;
  const jobs = Array.from(root.getElementsByTagName('jobNames')[0]!.getElementsByTagName('string')).map((e) => e.textContent ?? '');
  return { jobs, description: root.getElementsByTagName('description')[0]?.textContent ?? '' };
}

const job = (description: string) => `<flow-definition><description>${description}</description></flow-definition>`;
const view = (className: string, name: string, description: string, jobs: string[] = []) =>
  jenkinsXml(`<${className}><name>${name}</name><description>${description}</description><jobNames>${jobs.map((j) => `<string>${j}</string>`).join('')}</jobNames></${className}>`);

describe('planSync', () => {
  it('refuses jobs that are not ours and leaves them out of the views of the file; a view of only such jobs is not made', async () => {
    jenkins.seed('handmade', job('made by a person'));
    jenkins.seed('theirs', job(withMarker('', OTHER, 'theirs')));
    const planned = await plan({
      pipelineJobs: [
        pipelineJob('mine', { view: 'Mixed' }),
        pipelineJob('handmade', { view: 'Mixed' }),
        pipelineJob('theirs', { view: 'Foreign' }),
      ],
    });
    expect(item(planned, 'job', 'handmade')).toMatchObject({ action: 'refuse', reason: 'it exists and was not made by repoadmin; pass --adopt to take it over' });
    expect(item(planned, 'job', 'theirs')).toMatchObject({ action: 'refuse', reason: `it is managed by another source (${OTHER}); pass --adopt to take it over` });
    const mixed = item(planned, 'view', 'Mixed');
    expect(mixed?.action).toBe('create');
    expect(listView(mixed?.xml)).toEqual({ jobs: ['mine'], description: withMarker('', SOURCE, 'Mixed') });
    expect(item(planned, 'view', 'Foreign')).toBeUndefined();
    // Refusals change nothing: what apply would send is the job and the view.
    expect(planned.items.filter(isChange).map((i) => `${i.kind} ${i.name}`)).toEqual(['job mine', 'view Mixed']);
  });

  it('keeps a job refused for its type in the view it shares: the view stays as it is', async () => {
    const first = { pipelineJobs: [pipelineJob('build', { view: 'Reports' }), pipelineJob('report', { view: 'Reports' })] };
    await apply(first);
    const planned = await plan({ pipelineJobs: [pipelineJob('build', { view: 'Reports' })], multiBranchJobs: [pipelineJob('report', { view: 'Reports' })] });
    expect(item(planned, 'job', 'report')).toMatchObject({ action: 'refuse' });
    expect(item(planned, 'view', 'Reports')?.action).toBe('unchanged');
    expect(listView(item(planned, 'view', 'Reports')?.xml).jobs).toEqual(['build', 'report']);
  });

  it('posts a view again that lists jobs it replaces, naming them', async () => {
    await apply({ pipelineJobs: [pipelineJob('a', { view: 'Both' }), pipelineJob('b', { view: 'Both' })] });
    const planned = await plan({ multiBranchJobs: [pipelineJob('a', { view: 'Both' }), pipelineJob('b', { view: 'Both' })] }, { replace: true });
    expect(item(planned, 'job', 'a')).toMatchObject({ action: 'replace', reason: 'replaces a WorkflowJob; its build history is lost' });
    expect(item(planned, 'view', 'Both')).toMatchObject({ action: 'update', reason: 'posted again: Jenkins drops a, b from it when replacing' });
  });

  it('refuses a view it did not make, and one of ours that is not a list view; --adopt takes over the first', async () => {
    jenkins.views.set('Builds', { className: 'hudson.model.ListView', xml: view('hudson.model.ListView', 'Builds', 'the team board', ['old']) });
    jenkins.views.set('Mine', { className: 'hudson.model.MyView', xml: view('hudson.model.MyView', 'Mine', withMarker('', SOURCE, 'Mine')) });
    const file = { pipelineJobs: [pipelineJob('build', { view: 'Builds' }), pipelineJob('deploy', { view: 'Mine' })] };
    const planned = await plan(file);
    expect(item(planned, 'view', 'Builds')).toMatchObject({ action: 'refuse', reason: 'it exists and was not made by repoadmin; pass --adopt to take it over' });
    expect(item(planned, 'view', 'Mine')).toMatchObject({ action: 'refuse', reason: 'it is a MyView, not a list view' });

    const adopted = await plan(file, { adopt: true });
    expect(item(adopted, 'view', 'Builds')?.action).toBe('update');
    expect(item(adopted, 'view', 'Mine')?.action).toBe('refuse');
  });

  // Jenkins compares item names char by char (String.CASE_INSENSITIVE_ORDER): `Build` is `build`
  // and `ıdea` is `idea` (both upper-case to `I`), but `straße` is not `STRASSE`, which a
  // whole-string upper-casing would make it.
  it('finds items without regard to case, char by char', async () => {
    await apply({ pipelineJobs: [pipelineJob('Build'), pipelineJob('idea'), pipelineJob('strasse')] });
    const renamed = { pipelineJobs: [pipelineJob('build'), pipelineJob('ıdea'), pipelineJob('straße')] };
    const planned = await plan(renamed, { allowEmpty: true });
    expect(planned.items.map((i) => `${i.action} ${i.kind} ${i.name}`)).toEqual(['update job build', 'update job ıdea', 'create job straße', 'delete job strasse']);
    await apply(renamed, { allowEmpty: true });
    expect((await plan(renamed)).items.map((i) => i.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
  });

  it('labels the diff of an update with the kind and name of the item', async () => {
    const file = { pipelineJobs: [pipelineJob('build', { view: 'Builds', jobDescription: 'nightly' })] };
    await apply(file);
    jenkins.editConfig('build', (xml) => xml.replace('nightly', 'by hand'));
    const stored = jenkins.views.get('Builds')!;
    stored.xml = stored.xml.replace('<filterQueue>false</filterQueue>', '<filterQueue>true</filterQueue>');
    const planned = await plan(file);
    expect(item(planned, 'job', 'build')?.diff?.split('\n').slice(0, 2)).toEqual(['--- jenkins: job build', '+++ file: job build']);
    expect(item(planned, 'view', 'Builds')?.diff?.split('\n').slice(0, 2)).toEqual(['--- jenkins: view Builds', '+++ file: view Builds']);
  });
});

describe('desiredItems', () => {
  it('gives the configs of folders, jobs and views to create, in that order', () => {
    const items = desiredItems(definitions({ pipelineJobs: [pipelineJob('team/app', { view: 'Team' })] }), SOURCE);
    expect(items.map((i) => [i.kind, i.name, i.action])).toEqual([
      ['folder', 'team', 'create'],
      ['job', 'team/app', 'create'],
      ['view', 'Team', 'create'],
    ]);
    expect(listView(items[2]!.xml)).toEqual({ jobs: ['team/app'], description: withMarker('', SOURCE, 'Team') });
  });
});
