import { describe, expect, it } from 'vitest';
import type { VersionInformation } from '../../../common/schemas/repositories.js';
import { fakeApi, fakeDeps } from '../../../test/cli/fakes.js';
import { parseSearchFlags, runSearch } from './search.js';

function record(overrides: Partial<VersionInformation> = {}): VersionInformation {
  const r = {
    uid: '08880a31-5d7a-4abf-a89e-f2aa9e43da4f', projectName: 'shop', branch: 'main', groupId: 'g', artifactId: 'a', version: '1.0.0',
    repositoryUrl: null, creationDate: '2026-11-21T10:00:00.000+0000', type: 'LIBRARY', latestVersion: true, description: null, veto: null, ...overrides,
  };
  return { ...r, artifact: { groupId: r.groupId, artifactId: r.artifactId, version: r.version } };
}

const page = (records: VersionInformation[], currentPage = 1, totalPages = 1, totalElements = records.length) => ({
  versionInformation: records,
  page: { totalElements, totalPages, currentPage, numberOfElements: records.length },
});

describe('parseSearchFlags', () => {
  it('maps flags to the filters and paging of the API', () => {
    const opts = parseSearchFlags({ group: 'g', artifact: 'a', branch: 'main', latest: true, page: '2', size: '20', sort: 'version:desc', field: 'version' });
    expect(opts.filters).toEqual({ groupId: 'g', artifactId: 'a', version: undefined, projectName: undefined, branch: 'main', type: undefined, latestVersion: true });
    expect(opts.paging).toEqual({ page: 2, size: 20, sortField: 'version', sortDirection: 'DESC' });
  });

  it('rejects bad values as usage errors', () => {
    expect(() => parseSearchFlags({ field: 'nope' })).toThrow(/--field must be one of/);
    expect(() => parseSearchFlags({ page: '0' })).toThrow(/--page/);
    expect(() => parseSearchFlags({ size: 'ten' })).toThrow(/--size/);
    expect(() => parseSearchFlags({ sort: 'version:up' })).toThrow(/--sort/);
    // Usage errors (exit 2) here, not the server's validation error (exit 1).
    expect(() => parseSearchFlags({ size: '500' })).toThrow(expect.objectContaining({ code: 'usage', message: '--size must be a whole number from 1 to 100, not "500"' }));
    expect(() => parseSearchFlags({ sort: 'bogus:desc' })).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringMatching(/^--sort: the field must be one of projectName, .*, not "bogus"$/) }));
    expect(parseSearchFlags({ sort: 'artifact.version:desc' }).paging).toMatchObject({ sortField: 'artifact.version', sortDirection: 'DESC' });
    expect(() => parseSearchFlags({ all: true, page: '2' })).toThrow(/--all or --page/);
  });
});

describe('runSearch', () => {
  it('--field prints one line per match', async () => {
    const api = fakeApi({ search: async () => page([record({ version: '1.2.3' })]) });
    const report = await runSearch(parseSearchFlags({ group: 'g', latest: true, field: 'version' }), fakeDeps({ api }));
    expect(report.lines).toEqual(['1.2.3']);
  });

  it('--verified asks for verified records only and shows the run that built each', async () => {
    const provenance = {
      issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/shop:ref:refs/heads/main', repository: 'acme/shop', repositoryId: '42',
      ref: 'refs/heads/main', sha: 'a'.repeat(40), workflow: 'acme/shop/.github/workflows/ci.yml@refs/heads/main', runId: '7',
      runUrl: 'https://github.com/acme/shop/actions/runs/7', environment: null, publisherId: '5d7c4a0e-8f3b-4b3e-9a61-0c2d1e4f5a6b', verifiedAt: '2026-11-21T10:00:00.000Z',
    };
    const api = fakeApi({ search: async () => page([record({ provenance })]) });
    const report = await runSearch(parseSearchFlags({ group: 'g', verified: true }), fakeDeps({ api }));
    expect(api.calls[0]?.args[0]).toMatchObject({ groupId: 'g', verified: true });
    expect(report.table?.head.at(-1)).toBe('BUILT BY');
    expect(report.table?.rows[0]?.at(-1)).toBe('https://github.com/acme/shop/actions/runs/7');
    // Without the flag nothing is filtered, and the table is the one scripts know.
    expect(parseSearchFlags({ group: 'g' }).filters.verified).toBeUndefined();
  });

  it('--latest without a match is nothing_found (exit 3); without --latest it is a success', async () => {
    const api = fakeApi({ search: async () => page([]) });
    await expect(runSearch(parseSearchFlags({ group: 'g', latest: true }), fakeDeps({ api }))).rejects.toMatchObject({ code: 'nothing_found' });
    const report = await runSearch(parseSearchFlags({ group: 'g' }), fakeDeps({ api }));
    expect(report.table?.rows).toEqual([]);
    expect(report.notes?.[0]).toContain('No versions match groupId g');
  });

  it('--latest --field with several matches fails and names the branches and projects', async () => {
    const api = fakeApi({ search: async () => page([record(), record({ branch: 'dev' })]) });
    await expect(runSearch(parseSearchFlags({ group: 'g', latest: true, field: 'version' }), fakeDeps({ api }))).rejects.toMatchObject({
      code: 'failed',
      message: expect.stringMatching(/project shop branch main; project shop branch dev.*--branch or --project/),
    });
  });

  it('--all fetches every page and answers one page of everything', async () => {
    const api = fakeApi({
      search: async (_filters, paging) => (paging?.page === 1 ? page([record({ version: '1' })], 1, 2, 2) : page([record({ version: '2' })], 2, 2, 2)),
    });
    const report = await runSearch(parseSearchFlags({ group: 'g', all: true }), fakeDeps({ api }));
    expect(api.calls.map((c) => (c.args[1] as { page: number; size: number })).map((p) => [p.page, p.size])).toEqual([[1, 100], [2, 100]]);
    expect(report.json).toMatchObject({ versionInformation: [{ version: '1' }, { version: '2' }], page: { totalElements: 2, totalPages: 1, numberOfElements: 2 } });
    expect(report.notes).toEqual([]);
  });

  it('--all says it ignores --size', async () => {
    const api = fakeApi({ search: async () => page([record()], 1, 1, 1) });
    const report = await runSearch(parseSearchFlags({ group: 'g', all: true, size: '5' }), fakeDeps({ api }));
    expect(api.calls.map((c) => (c.args[1] as { size: number }).size)).toEqual([100]);
    expect(report.notes).toEqual(['--all fetches every record, 100 a request: --size is ignored.']);
  });

  it('says when a page is past the last one rather than that nothing matches', async () => {
    const api = fakeApi({ search: async () => page([], 99, 3, 250) });
    const report = await runSearch(parseSearchFlags({ group: 'com.bulk', page: '99' }), fakeDeps({ api }));
    expect(report.notes).toEqual(['Page 99 is past the last page (3) of the 250 records that match groupId com.bulk.']);
  });

  it('tells on stderr when there are more pages', async () => {
    const api = fakeApi({ search: async () => page([record()], 1, 3, 25) });
    const report = await runSearch(parseSearchFlags({}), fakeDeps({ api }));
    expect(report.notes).toEqual(['Page 1 of 3 (25 records): --page 2 for the next, --all for every page.']);
  });

  it('--latest --field fails when more latest records match than the page shows', async () => {
    const api = fakeApi({ search: async () => page([record()], 1, 2, 2) });
    await expect(runSearch(parseSearchFlags({ group: 'g', latest: true, field: 'version', size: '1' }), fakeDeps({ api }))).rejects.toMatchObject({
      code: 'failed',
      message: expect.stringMatching(/--latest matched 2 records \(project shop branch main; and 1 more\).*--branch or --project/),
    });
  });

  it('--field keeps one line per match when a value has line breaks', async () => {
    const api = fakeApi({ search: async () => page([record({ description: '# Title\n\nline\n' }), record({ description: null })]) });
    const report = await runSearch(parseSearchFlags({ group: 'g', field: 'description' }), fakeDeps({ api }));
    expect(report.lines).toEqual(['# Title line', '']);
  });
});

describe('search --env', () => {
  it('filters by the environment; with --latest it asks for the current record there, not the branch latest', () => {
    expect(parseSearchFlags({ env: 'prod' }).filters).toMatchObject({ environment: 'prod', latestVersion: undefined });
    const opts = parseSearchFlags({ env: 'prod', latest: true, group: 'g', artifact: 'a' });
    expect(opts.filters).toMatchObject({ environment: 'prod', groupId: 'g', artifactId: 'a', latestVersion: undefined });
    expect(opts.latest).toBe(true);
    expect(() => parseSearchFlags({ env: 'Prod' })).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringContaining('--env') }));
  });

  it('sends the environment and says nothing is current there when --latest finds nothing (exit 3)', async () => {
    const api = fakeApi({ search: async () => page([]) });
    await expect(runSearch(parseSearchFlags({ env: 'prod', latest: true, group: 'g' }), fakeDeps({ api }))).rejects.toMatchObject({
      code: 'nothing_found',
      message: 'nothing current in prod matches groupId g',
    });
    expect(api.calls[0]?.args[0]).toMatchObject({ environment: 'prod', groupId: 'g' });
  });
});
