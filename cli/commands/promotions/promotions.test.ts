import { describe, expect, it } from 'vitest';
import type { Promotion, PromotionPage } from '../../../common/schemas/environments.js';
import { fakeApi, fakeDeps } from '../../../test/cli/fakes.js';
import { printReport } from '../../output/index.js';
import { parsePromotionsFlags, runPromotions } from './promotions.js';

const entry = (overrides: Partial<Promotion> = {}): Promotion => ({
  id: '3f1c1e0a-1111-4222-8333-444455556666', uid: '08880a31-5d7a-4abf-a89e-f2aa9e43da4f', environment: 'prod',
  previousUid: '1b0e7f44-0d43-4d2c-9a53-38c4a7e2cf11', rollback: false, promotedAt: '2026-11-21T10:00:00.000Z',
  promotedBy: { userId: null, username: 'admin', tokenId: null }, comment: 'CHG-1', projectName: 'shop', groupId: 'com.acme', artifactId: 'app', branch: 'main',
  version: '2.4.0', previousVersion: '2.3.1', ...overrides,
});
const answer = (promotions: Promotion[], currentPage = 1, totalPages = 1): PromotionPage => ({
  promotions,
  page: { totalElements: promotions.length * totalPages, totalPages, currentPage, numberOfElements: promotions.length },
});

describe('parsePromotionsFlags', () => {
  it('maps the flags to the query, refusing a bad environment or size', () => {
    expect(parsePromotionsFlags({ project: 'shop', env: 'prod', page: '2', size: '50' })).toEqual({ project: 'shop', environment: 'prod', page: 2, size: 50 });
    expect(() => parsePromotionsFlags({ env: 'PROD' })).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringContaining('--env') }));
    expect(() => parsePromotionsFlags({ size: '500' })).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringContaining('--size') }));
  });
});

describe('runPromotions', () => {
  it('asks for the history of the project and environment and prints it, rollbacks marked', async () => {
    const api = fakeApi({ promotions: async () => answer([entry(), entry({ version: '2.3.1', previousVersion: '2.4.0', rollback: true, comment: null })], 1, 3) });
    const deps = fakeDeps({ api });
    await printReport(await runPromotions({ project: 'shop', environment: 'prod' }, deps), deps);
    expect(api.calls[0]?.args).toEqual([{ projectName: 'shop', environment: 'prod', groupId: undefined, artifactId: undefined, page: undefined, size: undefined }]);
    expect(deps.io.stdoutText()).toBe(
      '2026-11-21 10:00 UTC\tprod\tcom.acme:app\t2.4.0\t2.3.1\tadmin\tCHG-1\n2026-11-21 10:00 UTC\tprod\tcom.acme:app\t2.3.1 (rollback)\t2.4.0\tadmin\t\n',
    );
    expect(deps.io.stderrText()).toBe('Page 1 of 3 (6 promotions): --page 2 for more.\n');
  });

  it("takes the login's project, and says when nothing matches", async () => {
    const api = fakeApi({ projectName: async () => 'shop', promotions: async () => answer([]) });
    const deps = fakeDeps({ api });
    await printReport(await runPromotions({}, deps), deps);
    expect(api.calls[1]?.args[0]).toMatchObject({ projectName: 'shop' });
    expect(deps.io.stderrText()).toBe('No promotions match.\n');
  });
});
