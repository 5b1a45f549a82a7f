import { describe, expect, it } from 'vitest';
import { AppError } from '../../../common/errors.js';
import type { Promotion } from '../../../common/schemas/environments.js';
import type { VersionInformation } from '../../../common/schemas/repositories.js';
import { fakeApi, fakeDeps } from '../../../test/cli/fakes.js';
import { printReport } from '../../output/index.js';
import { parseCoordinates, parsePromoteFlags, runPromote } from './promote.js';

const UID = '08880a31-5d7a-4abf-a89e-f2aa9e43da4f';
const PREVIOUS = '1b0e7f44-0d43-4d2c-9a53-38c4a7e2cf11';

function record(overrides: Partial<VersionInformation> = {}): VersionInformation {
  const r = {
    uid: UID, projectName: 'shop', branch: 'main', groupId: 'com.acme', artifactId: 'app', version: '2.4.0',
    repositoryUrl: null, creationDate: '2026-11-21T10:00:00.000+0000', type: 'LIBRARY', latestVersion: true, description: null, veto: null, ...overrides,
  };
  return { ...r, artifact: { groupId: r.groupId, artifactId: r.artifactId, version: r.version } } as VersionInformation;
}
const page = (records: VersionInformation[]) => ({ versionInformation: records, page: { totalElements: records.length, totalPages: 1, currentPage: 1, numberOfElements: records.length } });

const promotion = (overrides: Partial<Promotion> = {}): Promotion => ({
  id: '3f1c1e0a-1111-4222-8333-444455556666', uid: UID, projectName: 'shop', groupId: 'com.acme', artifactId: 'app', branch: 'main', version: '2.4.0',
  environment: 'prod', previousUid: PREVIOUS, previousVersion: '2.5.0', rollback: false,
  promotedAt: '2026-11-21T10:00:00.000Z', promotedBy: { userId: null, username: 'admin', tokenId: null }, comment: null, ...overrides,
});

describe('parsePromoteFlags', () => {
  it('reads <group>:<artifact>:<version>, or --uid', () => {
    expect(parseCoordinates('com.acme:app:2.4.0')).toEqual({ groupId: 'com.acme', artifactId: 'app', version: '2.4.0' });
    expect(parsePromoteFlags({ to: 'prod', project: 'shop', branch: 'main', comment: 'CHG-1' }, 'com.acme:app:2.4.0')).toEqual({
      environment: 'prod', comment: 'CHG-1', project: 'shop', branch: 'main', coordinates: { groupId: 'com.acme', artifactId: 'app', version: '2.4.0' },
    });
    expect(parsePromoteFlags({ to: 'prod', uid: UID.toUpperCase() }, undefined)).toEqual({ environment: 'prod', comment: undefined, uid: UID });
  });

  it.each([
    [{ to: 'prod' }, 'com.acme:app', /<group>:<artifact>:<version>/],
    [{ to: 'prod' }, 'com.acme::2.4.0', /<group>:<artifact>:<version>/],
    [{ to: 'prod' }, undefined, /or --uid/],
    [{ to: 'Prod!' }, 'g:a:1', /--to: the environment's name/],
    [{ to: 'prod', uid: UID }, 'g:a:1', /not both/],
    [{ to: 'prod', uid: UID, branch: 'main' }, undefined, /not both/],
    [{ to: 'prod', uid: 'abc' }, undefined, /--uid must be a record's uid/],
  ])('refuses %j %s as a usage error', (flags, operand, message) => {
    expect(() => parsePromoteFlags(flags, operand)).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringMatching(message) }));
  });
});

describe('runPromote', () => {
  it('sends the coordinates when project and branch are known, and says what it replaced', async () => {
    const api = fakeApi({ projectName: async () => 'shop', promote: async () => ({ promotion: promotion({ rollback: true }), promoted: true }) });
    const deps = fakeDeps({ api });
    const report = await runPromote({ coordinates: { groupId: 'com.acme', artifactId: 'app', version: '2.4.0' }, branch: 'main', environment: 'prod', comment: 'CHG-1' }, deps);
    expect(api.calls.find((c) => c.name === 'promote')?.args).toEqual([
      { projectName: 'shop', branch: 'main', groupId: 'com.acme', artifactId: 'app', version: '2.4.0', environment: 'prod', comment: 'CHG-1' },
    ]);
    await printReport(report, deps);
    expect(deps.io.stdoutText()).toBe('');
    expect(deps.io.stderrText()).toBe(`Promoted com.acme:app:2.4.0 on shop main to prod (replacing ${PREVIOUS}, a rollback).\n`);
  });

  it('finds the one record by a search without --branch, and promotes it by uid', async () => {
    const api = fakeApi({ projectName: async () => null, search: async () => page([record()]), promote: async () => ({ promotion: promotion({ previousUid: null }), promoted: true }) });
    const deps = fakeDeps({ api, settings: { json: true } });
    await printReport(await runPromote({ coordinates: { groupId: 'com.acme', artifactId: 'app', version: '2.*' }, environment: 'prod' }, deps), deps);
    expect(api.calls[1]).toEqual({ name: 'search', args: [{ groupId: 'com.acme', artifactId: 'app', version: '2.\\*', projectName: undefined, branch: undefined }, { size: 10 }] });
    expect(api.calls[2]?.args).toEqual([{ uid: UID, environment: 'prod', comment: undefined }]);
    expect(JSON.parse(deps.io.stdoutText())).toMatchObject({ uid: UID, environment: 'prod', promoted: true });
  });

  it('exit 1 (failed) when the version is on several branches, 3 (not_found) when on none', async () => {
    const several = fakeApi({ projectName: async () => 'shop', search: async () => page([record(), record({ branch: 'release', uid: PREVIOUS })]) });
    await expect(runPromote({ coordinates: { groupId: 'com.acme', artifactId: 'app', version: '2.4.0' }, environment: 'prod' }, fakeDeps({ api: several }))).rejects.toMatchObject({
      code: 'failed',
      message: 'com.acme:app:2.4.0 is on 2 branches (shop main; shop release): add --project and --branch, or give --uid',
    });
    const none = fakeApi({ projectName: async () => 'shop', search: async () => page([]) });
    await expect(runPromote({ coordinates: { groupId: 'com.acme', artifactId: 'app', version: '9.9.9' }, environment: 'prod' }, fakeDeps({ api: none }))).rejects.toMatchObject({
      code: 'not_found',
      message: 'no record com.acme:app:9.9.9 on project shop',
    });
  });

  it("says so when the version is already current (exit 0)", async () => {
    const api = fakeApi({ promote: async () => ({ promotion: promotion(), promoted: false }) });
    const deps = fakeDeps({ api });
    await printReport(await runPromote({ uid: UID, environment: 'prod' }, deps), deps);
    expect(deps.io.stderrText()).toBe(`record ${UID} is already current in prod: nothing recorded.\n`);
  });

  it("a gate's refusal keeps its code (409: exit 1) and its message, after what was refused", async () => {
    const api = fakeApi({
      promote: async () => {
        throw new AppError('conflict', 'requires staging: 2.4.0 has never been in staging');
      },
    });
    await expect(runPromote({ uid: UID, environment: 'prod' }, fakeDeps({ api }))).rejects.toMatchObject({
      code: 'conflict',
      message: `record ${UID} cannot go to prod: requires staging: 2.4.0 has never been in staging`,
    });
  });

  it('checks the comment before sending it', async () => {
    const api = fakeApi();
    await expect(runPromote({ uid: UID, environment: 'prod', comment: 'x'.repeat(501) }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'validation', message: '--comment: at most 500 characters' });
    expect(api.calls).toEqual([]);
  });
});
