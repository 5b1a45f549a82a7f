import { describe, expect, it } from 'vitest';
import type { VersionInformation } from '../../../common/schemas/repositories.js';

type Veto = VersionInformation['veto'];
import { fakeApi, fakeDeps } from '../../../test/cli/fakes.js';
import { printReport } from '../../output/index.js';
import { parseVetoFlags, runVeto } from './veto.js';

const UID = '08880a31-5d7a-4abf-a89e-f2aa9e43da4f';
const vetoed = (veto: Veto): VersionInformation => ({
  uid: UID, projectName: 'shop', branch: 'main', groupId: 'com.acme', artifactId: 'app', version: '2.4.0',
  artifact: { groupId: 'com.acme', artifactId: 'app', version: '2.4.0' }, repositoryUrl: null, creationDate: '2026-11-21T10:00:00.000+0000',
  type: 'LIBRARY', latestVersion: true, description: null, veto,
});

describe('parseVetoFlags', () => {
  it('takes <uid> --reason, or --lift <uid>', () => {
    expect(parseVetoFlags({ reason: 'corrupts the cache' }, UID)).toEqual({ uid: UID, lift: false, reason: 'corrupts the cache' });
    expect(parseVetoFlags({ lift: true }, UID)).toEqual({ uid: UID, lift: true });
  });

  it.each([
    [{ reason: 'x' }, undefined, /give the record's uid/],
    [{ reason: 'x' }, 'com.acme:app:1', /must be a UUID/],
    [{}, UID, /missing --reason/],
    [{ reason: '  ' }, UID, /missing --reason/],
    [{ reason: 'x', lift: true }, UID, /not both/],
  ])('refuses %j %s as a usage error', (flags, uid, message) => {
    expect(() => parseVetoFlags(flags, uid)).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringMatching(message) }));
  });
});

describe('runVeto', () => {
  it('vetoes with the reason and says how to lift it', async () => {
    const api = fakeApi({ veto: async () => vetoed({ reason: 'corrupts the cache', by: 'admin', at: '2026-11-21T10:00:00.000Z' }) });
    const deps = fakeDeps({ api });
    await printReport(await runVeto({ uid: UID, lift: false, reason: 'corrupts the cache' }, deps), deps);
    expect(api.calls).toEqual([{ name: 'veto', args: [UID, 'corrupts the cache'] }]);
    expect(deps.io.stderrText()).toBe(`Vetoed com.acme:app:2.4.0: it cannot be promoted until repoadmin veto --lift ${UID}.\n`);
  });

  it('lifts a veto, also when the server answers without a body', async () => {
    const api = fakeApi({ liftVeto: async () => undefined });
    const deps = fakeDeps({ api, settings: { json: true } });
    await printReport(await runVeto({ uid: UID, lift: true }, deps), deps);
    expect(api.calls).toEqual([{ name: 'liftVeto', args: [UID] }]);
    expect(JSON.parse(deps.io.stdoutText())).toEqual({ uid: UID, veto: null });
  });

  it('checks the reason before sending it', async () => {
    const api = fakeApi();
    await expect(runVeto({ uid: UID, lift: false, reason: 'x'.repeat(501) }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'validation', message: '--reason: at most 500 characters' });
    expect(api.calls).toEqual([]);
  });
});
