import { describe, expect, it } from 'vitest';
import { credentials, fakeApi, fakeDeps, SERVER } from '../../../test/cli/fakes.js';
import { runToken } from '../token/token.js';
import { runWhoami } from './whoami.js';

const me = { userId: 'f1f1f1f1-0000-4000-8000-000000000001', username: 'ci-shop', projectName: 'shop', role: 'ROLE_USER' as const, mustChangePassword: false };

describe('runWhoami and runToken', () => {
  it('whoami combines the server answer, the server and the token expiry', async () => {
    const api = fakeApi({ me: async () => me, credentials: async () => credentials({ username: 'ci-shop' }), serverUrl: async () => SERVER });
    const report = await runWhoami({}, fakeDeps({ api }));
    expect(report.json).toEqual({ username: 'ci-shop', userId: me.userId, role: 'ROLE_USER', projectName: 'shop', url: SERVER, expiresAt: '2030-01-01T00:00:00.000Z' });
    expect(report.table?.rows).toContainEqual(['project', 'shop']);
  });

  it('whoami with a project token points to where its expiry is shown', async () => {
    const api = fakeApi({ me: async () => me, credentials: async () => credentials({ token: `rpa_${'A'.repeat(43)}`, expiresAt: undefined }), serverUrl: async () => SERVER });
    const report = await runWhoami({}, fakeDeps({ api }));
    expect(report.table?.rows).toContainEqual(['token expires', '(a project token: repoadmin token list shows its expiry)']);
    expect(report.json).toMatchObject({ expiresAt: null });
  });

  it('whoami with a token made from an ID token shows its project, branch and publisher, and never asks /v1/users/me', async () => {
    const creds = credentials({ source: 'oidc', username: undefined, userId: undefined, projectName: 'shop', branch: 'main', publisherId: 'p-1', expiresAt: '2026-11-21T10:15:00.000Z' });
    const api = fakeApi({ credentials: async () => creds, serverUrl: async () => SERVER });
    const report = await runWhoami({}, fakeDeps({ api }));
    expect(api.calls.map((c) => c.name)).not.toContain('me');
    expect(report.json).toMatchObject({ username: null, projectName: 'shop', branch: 'main', publisherId: 'p-1', expiresAt: '2026-11-21T10:15:00.000Z' });
    expect(report.table?.rows).toContainEqual(['trusted publisher', 'p-1']);
  });

  it('token prints the token alone, and {token, expiresAt} as JSON', async () => {
    const api = fakeApi({ credentials: async () => credentials({ token: 'abc.def.ghi' }) });
    const report = await runToken({}, fakeDeps({ api }));
    expect(report.lines).toEqual(['abc.def.ghi']);
    expect(report.json).toEqual({ token: 'abc.def.ghi', expiresAt: '2030-01-01T00:00:00.000Z' });
  });
});
