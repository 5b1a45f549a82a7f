// No job we write can fail to read its Jenkinsfile because of its branch spec: every rendered
// pipeline job is checked against what the git plugin's lightweight checkout accepts.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import xpath from 'xpath';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipelineJob, repoadmin, scratch } from './harness.js';

const HERE = new URL('.', import.meta.url).pathname;

// jenkins.plugins.git.GitSCMFileSystem.BuilderImpl.supports (git plugin): the specs a
// lightweight checkout takes at all. Of those, only one naming a single branch, without a
// wildcard, a regular expression or a variable, gives JGit a valid refspec
// (`+refs/heads/<name>:refs/remotes/origin/<name>`, GitSCMFileSystem.BuilderImpl.build).
const SUPPORTED = [/^((refs\/heads\/.*)|([^/]+)|(\*\/[^/*]+(\/[^/*]+)*))$/, /^((refs\/tags\/.*)|([^/]+)|(\*\/[^/*]+(\/[^/*]+)*))$/];
const ONE_BRANCH = /^(\*\/|refs\/heads\/|refs\/tags\/)[^*?[\]$:\\\s]+$/;

/** remoteBranchName -> the BranchSpec name Jenkins must get. */
const NAMES: [string, string][] = [
  ['main', '*/main'],
  ['release/1.x', '*/release/1.x'],
  ['feature-*', '*/feature-*'],
  ['refs/heads/main', 'refs/heads/main'],
  ['refs/tags/v1.0', 'refs/tags/v1.0'],
  ['origin/main', 'origin/main'],
  ['remotes/origin/main', 'remotes/origin/main'],
  ['*/main', '*/main'],
  ['**', '**'],
  [':^(?!master$).*', ':^(?!master$).*'],
  ['${BRANCH}', '${BRANCH}'],
  ['$BRANCH', '$BRANCH'],
  ['refs/heads/release-*', 'refs/heads/release-*'],
];

interface Rendered {
  name: string;
  branch: string;
  lightweight: string;
  polls: boolean;
}

function pipelineJobs(xmlByName: Map<string, string>): Rendered[] {
  const jobs: Rendered[] = [];
  for (const [name, xml] of xmlByName) {
    const document = new DOMParser().parseFromString(xml, 'text/xml') as unknown as Node;
    if ((xpath.select('/flow-definition', document) as Node[]).length === 0) continue;
    const text = (path: string) => (xpath.select(`string(${path})`, document) as string);
    jobs.push({
      name,
      branch: text('/flow-definition/definition/scm/branches/hudson.plugins.git.BranchSpec/name'),
      lightweight: text('/flow-definition/definition/lightweight'),
      polls: (xpath.select('//hudson.triggers.SCMTrigger', document) as Node[]).length > 0,
    });
  }
  return jobs;
}

function checkLightweight(job: Rendered): void {
  const branches = job.branch;
  if (job.lightweight === 'true') {
    expect(SUPPORTED.some((pattern) => pattern.test(branches)), `${job.name}: ${branches}`).toBe(true);
    expect(branches, job.name).toMatch(ONE_BRANCH);
    expect(job.polls, `${job.name} polls and reads its Jenkinsfile lightly`).toBe(false);
  } else {
    expect(job.lightweight, job.name).toBe('false');
  }
}

describe('branch specs of rendered pipeline jobs', () => {
  let files: Awaited<ReturnType<typeof scratch>>;
  const rendered = new Map<string, string>();
  beforeAll(async () => {
    files = await scratch();
    const jobs = NAMES.flatMap(([name], index) => [
      pipelineJob(`job-${index}`, { remoteBranchName: name }),
      pipelineJob(`polling-${index}`, { remoteBranchName: name, git: { repositoryId: 'r', repositoryUrl: 'https://git.example.com/r.git', repositoryTrigger: 'H/5 * * * *' } }),
    ]);
    jobs.push(pipelineJob('any-branch'));
    const path = await files.write('jenkins-dsl-jobs.json', { pipelineJobs: jobs });
    const run = await repoadmin(['jobs', 'render', path, '--source', 'branches', '--json']);
    expect(run.code).toBe(0);
    for (const config of JSON.parse(run.stdout) as { name: string; xml: string }[]) rendered.set(config.name, config.xml);
  });
  afterAll(async () => files.cleanup());

  it.each(NAMES.map(([name, spec], index) => [name, spec, index] as const))('writes %s as %s', (_, spec, index) => {
    const [job, polling] = pipelineJobs(new Map([[`job-${index}`, rendered.get(`job-${index}`)!], [`polling-${index}`, rendered.get(`polling-${index}`)!]]));
    expect(job!.branch).toBe(spec);
    expect(polling!.branch).toBe(spec);
    expect(polling!.lightweight).toBe('false');
  });

  it('reads the Jenkinsfile lightly only for one concrete branch, in every rendered pipeline job', () => {
    const jobs = pipelineJobs(rendered);
    expect(jobs).toHaveLength(NAMES.length * 2 + 1);
    for (const job of jobs) checkLightweight(job);
    const light = jobs.filter((job) => job.lightweight === 'true').map((job) => job.branch).sort();
    expect(light).toEqual(['*/main', '*/main', '*/release/1.x', 'refs/heads/main', 'refs/tags/v1.0']);
  });

  it('builds any branch without remoteBranchName: ** and a full checkout', () => {
    const [job] = pipelineJobs(new Map([['any-branch', rendered.get('any-branch')!]]));
    expect(job).toMatchObject({ branch: '**', lightweight: 'false' });
  });

  it('holds for every pipeline job of the golden files', async () => {
    const golden = join(HERE, 'golden');
    const entries = await readdir(golden, { recursive: true, withFileTypes: true });
    const configs = new Map<string, string>();
    for (const entry of entries.filter((e) => e.isFile())) {
      const path = join(entry.parentPath, entry.name);
      configs.set(relative(golden, path), await readFile(path, 'utf8'));
    }
    const jobs = pipelineJobs(configs);
    expect(jobs.map((job) => job.name).sort()).toEqual(['deploy/config.xml', 'report/config.xml', 'team/nightly/config.xml']);
    for (const job of jobs) checkLightweight(job);
  });
});
