import { describe, expect, it } from 'vitest';
import { isAppError } from '../../common/errors.js';
import { ciOf, formatPath, parseDefinitions } from './model.js';

const job = (extra: Record<string, unknown> = {}) => ({
  jobName: 'build',
  pipelineScriptPath: 'Jenkinsfile',
  git: { repositoryId: 'r', repositoryUrl: 'https://git.example.com/r.git' },
  ...extra,
});

const parse = (file: unknown, env: NodeJS.ProcessEnv = {}) => parseDefinitions(JSON.stringify(file), 'jenkins-dsl-jobs.json', env);

describe('parseDefinitions', () => {
  it('applies the logRotator defaults and null semantics', () => {
    const rotators = parse({
      pipelineJobs: [
        job({ jobName: 'absent' }),
        job({ jobName: 'empty', logRotator: {} }),
        job({ jobName: 'partial', logRotator: { numToKeep: 3 } }),
        job({ jobName: 'unlimited', logRotator: { daysToKeep: null, numToKeep: null } }),
        job({ jobName: 'none', logRotator: null }),
      ],
    }).jobs.map((j) => [j.name, j.logRotator]);
    expect(Object.fromEntries(rotators)).toEqual({
      absent: { daysToKeep: 10, numToKeep: 5 },
      empty: { daysToKeep: 10, numToKeep: 5 },
      partial: { daysToKeep: 10, numToKeep: 3 },
      unlimited: { daysToKeep: -1, numToKeep: -1 },
      none: null,
    });
  });

  it("takes credentials from the file, else from the running process's GIT_CREDENTIALS_ID, else none", () => {
    const file = { pipelineJobs: [job({ jobName: 'a', git: { ...job().git, credentialsId: 'own' } }), job({ jobName: 'b' })] };
    expect(parse(file, { GIT_CREDENTIALS_ID: 'agent' }).jobs.map((j) => j.git.credentialsId)).toEqual(['own', 'agent']);
    expect(parse(file, {}).jobs.map((j) => j.git.credentialsId)).toEqual(['own', undefined]);
  });

  it('collects folders outermost first and views with their jobs', () => {
    const definitions = parse({
      multiBranchJobs: [job({ jobName: 'a/b/c', view: 'V' })],
      pipelineJobs: [job({ jobName: 'a/d', view: 'V' }), job({ jobName: 'e', view: 'W' })],
    });
    expect(definitions.folders).toEqual(['a', 'a/b']);
    expect([...definitions.views]).toEqual([['V', ['a/b/c', 'a/d']], ['W', ['e']]]);
    expect(definitions.jobs.map((j) => j.kind)).toEqual(['multibranch', 'pipeline', 'pipeline']);
  });

  it('accepts {} and reports problems as one validation error', () => {
    expect(parse({}).jobs).toEqual([]);
    try {
      parse({ pipelineJobs: [job({ jobName: '' })] });
      expect.unreachable();
    } catch (error) {
      expect(isAppError(error) && error.code).toBe('validation');
      expect((error as Error).message).toContain('jenkins-dsl-jobs.json: pipelineJobs[0].jobName: invalid job name: must not be blank');
    }
  });

  // Jenkins keeps items in a case-insensitive map: `App` and `app` are one job, `Team` and `team` one folder.
  it('refuses names that differ only in case', () => {
    const problems = (file: unknown) => {
      try {
        parse(file);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(problems({ pipelineJobs: [job({ jobName: 'app' }), job({ jobName: 'App' })] })).toContain(
      'jenkins-dsl-jobs.json: pipelineJobs[1].jobName: duplicate job name "App" (also pipelineJobs[0]; Jenkins names ignore case)',
    );
    expect(problems({ pipelineJobs: [job({ jobName: 'Team/a' }), job({ jobName: 'team/b' })] })).toContain(
      'jenkins-dsl-jobs.json: pipelineJobs[1].jobName: folder "team" is written "Team" in pipelineJobs[0] (Jenkins names ignore case)',
    );
    expect(problems({ pipelineJobs: [job({ jobName: 'Team' }), job({ jobName: 'team/b' })] })).toContain(
      'jenkins-dsl-jobs.json: pipelineJobs[1].jobName: "team" is a job (pipelineJobs[0]), so it cannot also be a folder',
    );
  });

  it('formats JSON paths', () => {
    expect(formatPath(['pipelineJobs', 2, 'git', 'repositoryUrl'])).toBe('pipelineJobs[2].git.repositoryUrl');
    expect(formatPath([])).toBe('(top level)');
  });
});

describe('ciOf', () => {
  it('reads the build server from the file name, or --ci', () => {
    expect(ciOf('ci/jenkins-dsl-jobs.json')).toBe('jenkins');
    expect(ciOf('jobs.json', 'jenkins')).toBe('jenkins');
    expect(() => ciOf('jobs.json')).toThrow('cannot tell the build server from the file name jobs.json');
    expect(() => ciOf('gitlab-dsl-jobs.json')).toThrow('unsupported build server "gitlab" (from gitlab-dsl-jobs.json); supported: jenkins');
  });
});
