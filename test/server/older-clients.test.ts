// What the older service's own clients send (docs/api.md, "Compatibility details"): dates as
// epoch milliseconds (a default Jackson ObjectMapper) and the older page's sort columns. On every
// database kind configured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('older clients on %s', (kind) => {
  let server: TestServer;
  let admin: string;

  const publish = (body: unknown) => server.request('POST', '/v1/repositories', { body, token: admin });
  const search = (body: unknown, query = '') => server.request('POST', `/v1/repositories/search${query}`, { body });
  const record = (artifactId: string, over: Record<string, unknown> = {}) => ({
    projectName: 'old',
    branch: 'main',
    artifact: { groupId: 'org.old', artifactId, version: '1.0.0' },
    ...over,
  });

  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  describe('creationDate as epoch milliseconds', () => {
    it('is stored as that instant and answered in the seed shape', async () => {
      // 2019-03-02T20:30:35.420Z, the specification's example date, as Jackson writes it.
      const res = await publish(record('millis', { creationDate: 1551558635420 }));
      expect(res.status).toBe(201);
      const found = await search({ artifactId: 'millis' });
      expect(found.body.versionInformation[0].creationDate).toBe('2019-03-02T20:30:35.420+0000');
      const row = await server.db('versions').where({ artifact_id: 'millis' }).first();
      expect(new Date(row.creation_date).getTime()).toBe(1551558635420);
    });

    it('takes 0 as 1970-01-01, not as "absent"', async () => {
      expect((await publish(record('epoch', { creationDate: 0 }))).status).toBe(201);
      const found = await search({ artifactId: 'epoch' });
      expect(found.body.versionInformation[0].creationDate).toBe('1970-01-01T00:00:00.000+0000');
    });

    it.each([
      ['a fraction', 1551558635420.5, 'must be whole milliseconds since 1970-01-01 in the years 1000 to 9999'],
      ['a year past 9999', 253402300800000, 'in the years 1000 to 9999'],
      ['a year before 1000', -30610224000001, 'in the years 1000 to 9999'],
      ['a boolean', true, 'or epoch milliseconds'],
    ])('rejects %s with a 400 naming the field', async (_name, value, message) => {
      const res = await publish(record('bad-millis', { creationDate: value }));
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(['creationDate']);
      expect(res.body.errors[0].message).toContain(message);
      expect(await server.db('versions').where({ artifact_id: 'bad-millis' })).toHaveLength(0);
    });

    it('still rejects a number written as text', async () => {
      const res = await publish(record('text-millis', { creationDate: '1551558635420' }));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe('creationDate');
    });
  });

  describe('sortField of the older page', () => {
    beforeAll(async () => {
      for (const [artifactId, url, latest] of [
        ['sort-b', 'https://git.old.test/b.git', true],
        ['sort-c', 'https://git.old.test/c.git', false],
        ['sort-a', 'https://git.old.test/a.git', false],
      ] as const) {
        expect((await publish(record(artifactId, { repositoryUrl: url, latestVersion: latest, creationDate: '2020-01-01T00:00:00Z' }))).status).toBe(201);
      }
    });

    it('sorts by repositoryUrl both ways', async () => {
      const asc = await search({ artifactId: 'sort-*' }, '?sortField=repositoryUrl&sortDirection=ASC');
      expect(asc.status).toBe(200);
      expect(asc.body.versionInformation.map((v: { artifactId: string }) => v.artifactId)).toEqual(['sort-a', 'sort-b', 'sort-c']);
      const desc = await search({ artifactId: 'sort-*' }, '?sortField=repositoryUrl&sortDirection=desc');
      expect(desc.body.versionInformation.map((v: { artifactId: string }) => v.artifactId)).toEqual(['sort-c', 'sort-b', 'sort-a']);
    });

    it('sorts by latestVersion, false before true ascending', async () => {
      const asc = await search({ artifactId: 'sort-*' }, '?sortField=latestVersion&sortDirection=ASC');
      expect(asc.status).toBe(200);
      expect(asc.body.versionInformation.map((v: { latestVersion: boolean }) => v.latestVersion)).toEqual([false, false, true]);
      const desc = await search({ artifactId: 'sort-*' }, '?sortField=latestVersion&sortDirection=DESC');
      expect(desc.body.versionInformation[0]).toMatchObject({ artifactId: 'sort-b', latestVersion: true });
    });

    it('still rejects a column that is not one', async () => {
      const res = await search({}, '?sortField=description');
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe('sortField');
    });
  });
});
