// A Jenkinsfile that manages job properties itself (Declarative `parameters`/`triggers`/`options`,
// scripted `properties([...])`): after its build, diff settles and apply keeps what it saved,
// while the fields of the file are still enforced (docs/jobs.md, "Fields the Jenkinsfile may own").
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

const SOURCE = 'jenkins-dsl-jobs.json@git.example.com/team/jobs';

async function run(verb: 'diff' | 'apply', content: unknown, ...flags: string[]) {
  const path = await files.write('jenkins-dsl-jobs.json', content);
  return repoadmin(['jobs', verb, path, '--source', SOURCE, ...flags], { env: jenkinsEnv(jenkins) });
}

const file = (extra: Record<string, unknown> = {}) => ({ pipelineJobs: [pipelineJob('build', { cronTrigger: 'H 2 * * *', ...extra })] });

const DISABLE_CONCURRENT = '<org.jenkinsci.plugins.workflow.job.properties.DisableConcurrentBuildsJobProperty><abortPrevious>false</abortPrevious></org.jenkinsci.plugins.workflow.job.properties.DisableConcurrentBuildsJobProperty>';
const DISCARDER = '<jenkins.model.BuildDiscarderProperty><strategy class="hudson.tasks.LogRotator"><daysToKeep>-1</daysToKeep><numToKeep>3</numToKeep><artifactDaysToKeep>-1</artifactDaysToKeep><artifactNumToKeep>-1</artifactNumToKeep></strategy></jenkins.model.BuildDiscarderProperty>';
const PARAMETERS = '<hudson.model.ParametersDefinitionProperty><parameterDefinitions><hudson.model.StringParameterDefinition><name>TARGET</name><defaultValue>staging</defaultValue><trim>false</trim></hudson.model.StringParameterDefinition></parameterDefinitions></hudson.model.ParametersDefinitionProperty>';

describe('a Jenkinsfile that manages its own job properties', () => {
  it('Declarative: diff settles after the build, apply keeps the parameters and the tracker, a managed change still lands', async () => {
    expect((await run('apply', file())).code).toBe(0);
    jenkins.declarativeBuild('build', {
      parameters: [{ name: 'VERSION', defaultValue: '1.0' }],
      triggers: [{ className: 'hudson.triggers.SCMTrigger', spec: 'H/15 * * * *' }],
      quietPeriod: 10,
      properties: [DISABLE_CONCURRENT],
    });
    const saved = jenkins.item('build')!.xml;
    expect(saved).toContain('<name>VERSION</name>');

    const diff = await run('diff', file());
    expect(diff.stdout).toContain('= unchanged job build');
    expect(diff.code).toBe(0);
    const posts = jenkins.posts().length;
    expect((await run('apply', file())).stdout).toBe('summary: 1 unchanged, 0 failed\n');
    expect(jenkins.posts().length).toBe(posts);

    // A field of the file changes: the update lands, and what the Jenkinsfile saved stays.
    const changed = await run('apply', file({ pipelineScriptPath: 'ci/Jenkinsfile', cronTrigger: 'H 3 * * *' }));
    expect(changed.code).toBe(0);
    expect(changed.stdout).toContain('updated job build');
    const xml = jenkins.item('build')!.xml;
    expect(xml).toContain('<scriptPath>ci/Jenkinsfile</scriptPath>');
    expect(xml).toContain('<spec>H 3 * * *</spec>');
    expect(xml).toContain('<name>VERSION</name>');
    expect(xml).toContain('<spec>H/15 * * * *</spec>');
    expect(xml).toContain('DeclarativeJobPropertyTrackerAction');
    expect(xml).toContain('DisableConcurrentBuildsJobProperty');
    expect(xml).toMatch(/<quietPeriod>10<\/quietPeriod>/);

    // The next build finds its tracker and keeps the job as it is; diff stays settled.
    jenkins.declarativeBuild('build', { parameters: [{ name: 'VERSION', defaultValue: '1.0' }], triggers: [{ className: 'hudson.triggers.SCMTrigger', spec: 'H/15 * * * *' }], quietPeriod: 10, properties: [DISABLE_CONCURRENT] });
    expect((await run('diff', file({ pipelineScriptPath: 'ci/Jenkinsfile', cronTrigger: 'H 3 * * *' }))).code).toBe(0);
  });

  it('Declarative: a trigger class the Jenkinsfile declares is its own, and the file does not fight it', async () => {
    expect((await run('apply', file())).code).toBe(0);
    jenkins.declarativeBuild('build', { triggers: [{ className: 'hudson.triggers.TimerTrigger', spec: 'H 5 * * *' }] });
    expect(jenkins.item('build')!.xml).toContain('<spec>H 5 * * *</spec>');
    const diff = await run('diff', file());
    expect(diff.code).toBe(0);
  });

  // docs/jobs.md, "Fields the Jenkinsfile may own": when both set a build discarder, the Jenkinsfile's stays.
  it('Declarative options { buildDiscarder(...) }: the discarder is the Jenkinsfile\'s, other managed fields still land', async () => {
    expect((await run('apply', file())).code).toBe(0);
    jenkins.declarativeBuild('build', { properties: [DISCARDER] });
    expect((await run('diff', file())).code).toBe(0);
    const changed = await run('apply', file({ pipelineScriptPath: 'ci/Jenkinsfile', logRotator: { daysToKeep: 30, numToKeep: 20 } }));
    expect(changed.stdout).toContain('updated job build');
    const xml = jenkins.item('build')!.xml;
    expect(xml).toContain('<scriptPath>ci/Jenkinsfile</scriptPath>');
    expect(xml).toContain('<numToKeep>3</numToKeep>');
    expect(xml).not.toContain('<daysToKeep>30</daysToKeep>');
    expect(xml.match(/BuildDiscarderProperty>/g)).toHaveLength(2);
    expect((await run('diff', file({ pipelineScriptPath: 'ci/Jenkinsfile', logRotator: { daysToKeep: 30, numToKeep: 20 } }))).code).toBe(0);
  });

  it('scripted properties([...]): diff settles, apply keeps the parameters and the tracker, a managed change still lands', async () => {
    expect((await run('apply', file())).code).toBe(0);
    jenkins.scriptedPropertiesBuild('build', [PARAMETERS]);
    expect((await run('diff', file())).code).toBe(0);

    const changed = await run('apply', file({ logRotator: { daysToKeep: 30, numToKeep: 20 } }));
    expect(changed.code).toBe(0);
    expect(changed.stdout).toContain('updated job build');
    const xml = jenkins.item('build')!.xml;
    expect(xml).toContain('<daysToKeep>30</daysToKeep>');
    expect(xml).toContain('<name>TARGET</name>');
    expect(xml).toContain('org.jenkinsci.plugins.workflow.multibranch.JobPropertyTrackerAction');

    // The next run removes and re-adds only what its tracker names: the file's fields stay.
    jenkins.scriptedPropertiesBuild('build', [PARAMETERS]);
    expect((await run('diff', file({ logRotator: { daysToKeep: 30, numToKeep: 20 } }))).code).toBe(0);
  });

  it('still sees a hand edit of a field the file manages', async () => {
    expect((await run('apply', file())).code).toBe(0);
    jenkins.scriptedPropertiesBuild('build', [PARAMETERS]);
    jenkins.editConfig('build', (xml) => xml.replace('<spec>H 2 * * *</spec>', '<spec>H 9 * * *</spec>'));
    const diff = await run('diff', file());
    expect(diff.code).toBe(6);
    expect(diff.stdout).toMatch(/^\+\s+<spec>H 2 \* \* \*<\/spec>$/m);
    expect(diff.stdout).not.toContain('TARGET');
  });
});
