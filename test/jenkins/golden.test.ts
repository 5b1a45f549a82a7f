// Golden files: `jobs render` of the sample file gives the committed config.xml files; each is
// well-formed, has the classes and element paths of docs/jobs.md (checked with XPath), and has every
// element of a real Jenkins config.xml of the same kind (reference-samples.ts).
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DOMParser, type Document } from '@xmldom/xmldom';
import xpath from 'xpath';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoadmin, scratch } from './harness.js';
import { REFERENCE_SAMPLES } from './reference-samples.js';

const HERE = new URL('.', import.meta.url).pathname;
const GOLDEN = join(HERE, 'golden');
const SAMPLE = join(HERE, 'fixtures', 'jenkins-dsl-jobs.json');

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort();
}

function parse(xml: string): Document {
  return new DOMParser({
    onError: (level, message) => {
      throw new Error(`not well-formed (${level}): ${message}`);
    },
  }).parseFromString(xml, 'text/xml');
}

const golden = new Map<string, Document>();

beforeAll(async () => {
  for (const file of await filesUnder(GOLDEN)) golden.set(file, parse(await readFile(join(GOLDEN, file), 'utf8')));
});

/** The text of the one node an XPath selects; fails when it selects none or several. */
function text(file: string, path: string): string {
  const nodes = xpath.select(path, golden.get(file)! as unknown as Node) as Node[];
  expect(nodes, `${file}: ${path}`).toHaveLength(1);
  return nodes[0]!.textContent ?? '';
}

function count(file: string, path: string): number {
  return (xpath.select(path, golden.get(file)! as unknown as Node) as Node[]).length;
}

describe('jobs render golden files', () => {
  let out: Awaited<ReturnType<typeof scratch>>;
  beforeAll(async () => {
    out = await scratch();
  });
  afterAll(async () => out.cleanup());

  it('renders exactly the committed golden files', async () => {
    const run = await repoadmin(['jobs', 'render', SAMPLE, '--source', 'golden', '--out', out.dir], { env: { GIT_CREDENTIALS_ID: 'from-env' } });
    expect(run.stderr).toBe('wrote 8 config.xml files under ' + out.dir + '\n');
    expect(run.code).toBe(0);
    const rendered = await filesUnder(out.dir);
    expect(rendered).toEqual([...golden.keys()]);
    for (const file of rendered) {
      expect(await readFile(join(out.dir, file), 'utf8'), file).toBe(await readFile(join(GOLDEN, file), 'utf8'));
    }
  });

  it('prints them without --out', async () => {
    const run = await repoadmin(['jobs', 'render', SAMPLE, '--source', 'golden'], { env: { GIT_CREDENTIALS_ID: 'from-env' } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('<!-- job team/nightly -->\n<?xml version="1.0" encoding="UTF-8"?>\n<flow-definition>');
    expect(run.stdout).toContain(await readFile(join(GOLDEN, 'deploy/config.xml'), 'utf8'));
  });

  it('maps a pipeline job as docs/jobs.md says', () => {
    const f = 'team/nightly/config.xml';
    expect(text(f, '/flow-definition/description')).toBe(
      'Nightly build of main <with> "quotes" & ampersands\nManaged by repoadmin from golden (item team/nightly; trigger token sha256 ae520436fa9a0a22): edits made in Jenkins are overwritten by the next apply.',
    );
    const definition = "/flow-definition/definition[@class='org.jenkinsci.plugins.workflow.cps.CpsScmFlowDefinition']";
    expect(text(f, `${definition}/scriptPath`)).toBe('ci/nightly.Jenkinsfile');
    const remote = `${definition}/scm[@class='hudson.plugins.git.GitSCM']/userRemoteConfigs/hudson.plugins.git.UserRemoteConfig`;
    expect(text(f, `${remote}/url`)).toBe('https://git.example.com/team/app.git');
    expect(text(f, `${remote}/credentialsId`)).toBe('https-token');
    expect(count(f, `${remote}/name`)).toBe(0);
    expect(text(f, `${definition}/scm/branches/hudson.plugins.git.BranchSpec/name`)).toBe('*/main');
    // It polls its repository (SCMTrigger), which needs the checkout a lightweight one skips.
    expect(text(f, `${definition}/lightweight`)).toBe('false');
    expect(text('deploy/config.xml', '//hudson.plugins.git.BranchSpec/name')).toBe('*/release/1.x');
    expect(text('deploy/config.xml', '/flow-definition/definition/lightweight')).toBe('true');
    const triggers = '/flow-definition/properties/org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty/triggers';
    expect(text(f, `${triggers}/hudson.triggers.TimerTrigger/spec`)).toBe('H 2 * * 1-5');
    expect(text(f, `${triggers}/hudson.triggers.SCMTrigger/spec`)).toBe('H/15 * * * *');
    expect(text(f, '/flow-definition/authToken')).toBe('3f2504e0-4f89-41d3-9a0c-0305e82c3301');
    const strategy = "/flow-definition/properties/jenkins.model.BuildDiscarderProperty/strategy[@class='hudson.tasks.LogRotator']";
    expect(text(f, `${strategy}/daysToKeep`)).toBe('30');
    expect(text(f, `${strategy}/numToKeep`)).toBe('-1');
    expect(text(f, `${strategy}/artifactDaysToKeep`)).toBe('-1');
    expect(text(f, `${strategy}/artifactNumToKeep`)).toBe('-1');
  });

  it('uses GIT_CREDENTIALS_ID, ** for any branch, the logRotator defaults, and no rotation for null', () => {
    expect(text('report/config.xml', '//hudson.plugins.git.UserRemoteConfig/credentialsId')).toBe('from-env');
    expect(text('report/config.xml', '//hudson.plugins.git.BranchSpec/name')).toBe('**');
    expect(text('report/config.xml', '/flow-definition/definition/lightweight')).toBe('false');
    expect(text('report/config.xml', '//strategy/daysToKeep')).toBe('10');
    expect(text('report/config.xml', '//strategy/numToKeep')).toBe('20');
    expect(count('report/config.xml', '//hudson.triggers.SCMTrigger')).toBe(0);
    expect(count('report/config.xml', '/flow-definition/authToken')).toBe(0);
    expect(count('deploy/config.xml', '//jenkins.model.BuildDiscarderProperty')).toBe(0);
    expect(count('deploy/config.xml', '//org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty')).toBe(0);
  });

  it('maps a multibranch job as docs/jobs.md says', () => {
    const f = 'team/app-multibranch/config.xml';
    const root = '/org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject';
    const source = `${root}/sources/data/jenkins.branch.BranchSource/source[@class='jenkins.plugins.git.GitSCMSource']`;
    expect(text(f, `${source}/id`)).toBe('app-repo');
    expect(text(f, `${source}/remote`)).toBe('git@git.example.com:team/app.git');
    expect(text(f, `${source}/credentialsId`)).toBe('git-ssh-key');
    expect(count(f, `${source}/traits/jenkins.plugins.git.traits.BranchDiscoveryTrait`)).toBe(1);
    expect(text(f, `${root}/factory[@class='org.jenkinsci.plugins.workflow.multibranch.WorkflowBranchProjectFactory']/scriptPath`)).toBe('ci/Jenkinsfile');
    expect(text(f, `${root}/triggers/hudson.triggers.TimerTrigger/spec`)).toBe('H H(0-5) * * *');
    const orphans = `${root}/orphanedItemStrategy[@class='com.cloudbees.hudson.plugins.folder.computed.DefaultOrphanedItemStrategy']`;
    expect(text(f, `${orphans}/pruneDeadBranches`)).toBe('true');
    expect(text(f, `${orphans}/daysToKeep`)).toBe('10');
    expect(text(f, `${orphans}/numToKeep`)).toBe('5');
    expect(text('library-multibranch/config.xml', '//orphanedItemStrategy/pruneDeadBranches')).toBe('false');
    expect(text('library-multibranch/config.xml', '//source/credentialsId')).toBe('from-env');
    expect(count('library-multibranch/config.xml', `${root}/triggers/*`)).toBe(0);
  });

  it('writes list views with their jobs by full name, recursing only when a job is in a folder', () => {
    expect((xpath.select('/hudson.model.ListView/jobNames/string/text()', golden.get('@views/Team/config.xml')! as unknown as Node) as Node[]).map((n) => n.nodeValue)).toEqual([
      'team/app-multibranch',
      'team/nightly',
    ]);
    expect(text('@views/Team/config.xml', '/hudson.model.ListView/recurse')).toBe('true');
    expect(text('@views/Deploy/config.xml', '/hudson.model.ListView/recurse')).toBe('false');
    expect(text('@views/Deploy/config.xml', '/hudson.model.ListView/description')).toBe('Managed by repoadmin from golden (item Deploy): edits made in Jenkins are overwritten by the next apply.');
    expect(count('@views/Deploy/config.xml', '/hudson.model.ListView/columns/*')).toBe(7);
    expect(count('team/config.xml', '/com.cloudbees.hudson.plugins.folder.Folder')).toBe(1);
  });

  it('gives folders and multibranch projects the default health metric, so the weather column shows', () => {
    const metric = 'healthMetrics/com.cloudbees.hudson.plugins.folder.health.WorstChildHealthMetric/nonRecursive';
    expect(text('team/config.xml', `/com.cloudbees.hudson.plugins.folder.Folder/${metric}`)).toBe('false');
    for (const f of ['team/app-multibranch/config.xml', 'library-multibranch/config.xml']) {
      expect(text(f, `/org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject/${metric}`)).toBe('false');
    }
  });

  describe.each(REFERENCE_SAMPLES)('has every element of the real sample $source', (sample) => {
    it.each(sample.elements)(`${sample.golden}: %s`, (path) => {
      expect(count(sample.golden, path)).toBeGreaterThanOrEqual(1);
    });
  });
});
