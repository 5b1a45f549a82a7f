import { describe, expect, it } from 'vitest';
import type { EnvironmentList } from '../../../common/schemas/environments.js';
import type { VersionInformation } from '../../../common/schemas/repositories.js';
import { fakeApi, fakeDeps } from '../../../test/cli/fakes.js';
import { printReport } from '../../output/index.js';
import { runEnvList } from './list.js';
import { parseEnvironments, runEnvSet } from './set.js';

const ADMIN = { id: '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd', name: 'admin' };

function record(version: string): VersionInformation {
  return {
    uid: '08880a31-5d7a-4abf-a89e-f2aa9e43da4f', projectName: 'shop', branch: 'main', groupId: 'com.acme', artifactId: 'app', version,
    artifact: { groupId: 'com.acme', artifactId: 'app', version }, repositoryUrl: null, creationDate: '2026-11-21T10:00:00.000+0000',
    type: 'LIBRARY', latestVersion: true, description: null, veto: null,
  };
}

const LIST: EnvironmentList = {
  projectName: 'shop',
  environments: [
    {
      name: 'dev', requires: null, soakMinutes: null, protected: false,
      current: [{ groupId: 'com.acme', artifactId: 'app', record: record('2.4.0'), promotionId: '3f1c1e0a-1111-4222-8333-444455556666', promotedAt: '2026-11-21T09:30:12.000Z', promotedBy: { userId: ADMIN.id, username: 'admin', tokenId: null } }],
    },
    { name: 'staging', requires: 'dev', soakMinutes: null, protected: false, current: [] },
    { name: 'prod', requires: 'staging', soakMinutes: 60, protected: true, current: [] },
  ],
};

describe('parseEnvironments', () => {
  it('reads names, then gates after a colon, split by commas', () => {
    expect(parseEnvironments(['dev', 'staging:requires=dev', 'prod:requires=staging,soak=60,protected'])).toEqual([
      { name: 'dev' },
      { name: 'staging', requires: 'dev' },
      { name: 'prod', requires: 'staging', soakMinutes: 60, protected: true },
    ]);
  });

  it.each([
    [[], /give the environments in order/],
    [['Prod'], /"Prod": the environment's name must be 1 to 32 lower-case letters/],
    [['dev', 'dev'], /"dev": dev is named twice/],
    [['dev', 'prod:requires=staging'], /"prod:requires=staging": requires=staging names no earlier environment \(earlier: dev\)/],
    [['prod:requires=prod'], /requires=prod names no earlier environment \(prod is the first\)/],
    [['dev', 'prod:soak=60'], /soak=60 needs requires=ENV/],
    [['dev', 'prod:requires=dev,soak=an-hour'], /soak takes whole minutes from 1 to 43200, e\.g\. soak=60, not "soak=an-hour"/],
    [['dev', 'prod:requires=dev,soak=-1'], /soak takes whole minutes/],
    [['dev', 'prod:requires=dev,soak=0'], /soak takes whole minutes/],
    [['dev', 'prod:requires=dev,soak=43201'], /soak takes whole minutes/],
    [['dev', 'prod:requires=dev,protected=yes'], /protected takes no value/],
    [['dev', 'prod:requires=dev,frozen'], /unknown option "frozen" \(options: requires=ENV, soak=MINUTES, protected\)/],
    [['dev', 'prod:requires=dev,requires=dev'], /requires is given twice/],
    [['dev', 'prod:'], /an empty option after "prod:"/],
    [['dev', 'prod:requires='], /requires takes the name of an earlier environment/],
  ])('refuses %j as a usage error (exit 2) naming the word', (words, message) => {
    expect(() => parseEnvironments(words)).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringMatching(message) }));
  });
});

describe('runEnvSet', () => {
  it("sends the environments to the project's endpoint and shows them with their gates", async () => {
    const api = fakeApi({ setEnvironments: async () => LIST });
    const deps = fakeDeps({ api });
    const report = await runEnvSet({ project: 'shop', environments: parseEnvironments(['dev', 'staging:requires=dev', 'prod:requires=staging,soak=60,protected']) }, deps);
    expect(api.calls).toEqual([
      { name: 'setEnvironments', args: ['shop', [{ name: 'dev' }, { name: 'staging', requires: 'dev' }, { name: 'prod', requires: 'staging', soakMinutes: 60, protected: true }]] },
    ]);
    await printReport(report, deps);
    expect(deps.io.stdoutText()).toBe('dev\t-\nstaging\trequires=dev\nprod\trequires=staging,soak=60,protected\n');
    expect(deps.io.stderrText()).toBe('Set 3 environments of shop.\n');
  });

  it("takes the login's project without --project, and asks for --project when there is none", async () => {
    const api = fakeApi({ projectName: async () => 'shop', setEnvironments: async () => LIST });
    await runEnvSet({ environments: [{ name: 'dev' }] }, fakeDeps({ api }));
    expect(api.calls.map((c) => c.args[0])).toEqual([undefined, 'shop']);
    const admin = fakeApi({ projectName: async () => null });
    await expect(runEnvSet({ environments: [{ name: 'dev' }] }, fakeDeps({ api: admin }))).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--project') });
  });
});

describe('runEnvList', () => {
  it('prints a row per environment and current artifact: environment, artifact, version, by, when', async () => {
    const api = fakeApi({ environments: async () => LIST });
    const deps = fakeDeps({ api, tty: true, settings: { color: false } });
    await printReport(await runEnvList({ project: 'shop' }, deps), deps);
    const lines = deps.io.stdoutText().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ENVIRONMENT\s+ARTIFACT\s+VERSION\s+BY\s+WHEN$/);
    expect(lines[1]).toMatch(/^dev\s+com\.acme:app\s+2\.4\.0\s+admin\s+2026-11-21 09:30 UTC$/);
    expect(lines[2]).toMatch(/^staging\s+-$/);
    expect(lines[3]).toMatch(/^prod\s+-$/);
    expect(deps.io.stderrText()).toBe('staging: requires=dev\nprod: requires=staging,soak=60,protected\n');
  });

  it('prints the API answer with --json', async () => {
    const api = fakeApi({ environments: async () => LIST });
    const deps = fakeDeps({ api, settings: { json: true } });
    await printReport(await runEnvList({ project: 'shop' }, deps), deps);
    expect(JSON.parse(deps.io.stdoutText())).toEqual(LIST);
  });

  it('says how to set environments when the project has none', async () => {
    const api = fakeApi({ environments: async () => ({ projectName: 'shop', environments: [] }) });
    const deps = fakeDeps({ api });
    await printReport(await runEnvList({ project: 'shop' }, deps), deps);
    expect(deps.io.stdoutText()).toBe('');
    expect(deps.io.stderrText()).toContain('repoadmin env set --project shop');
  });
});
