// A retention run moves at most RUN_DELETE_MAX (10,000) records into the trash; the rest go at the
// next run. One key with more removable records than that: the run is one key's transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_DELETE_MAX, RetentionPolicyCreate } from '../../common/schemas/retention.js';
import { toRow } from '../../server/db/versions.js';
import { createPolicy, runPolicy } from '../../server/services/retention.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { servicesOf } from './services.js';

const RECORDS = RUN_DELETE_MAX + 5;

// On MariaDB too: the query that finds what a policy removes stays within the statement limit for
// one key of 10,005 records (server/db/retention.ts, lookedAt).
describe.each(dbKinds())('the cap of a retention run on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ kind });
    const created = new Date('2026-01-01T00:00:00Z');
    const rows = Array.from({ length: RECORDS }, (_, i) => ({
      ...toRow({
        projectName: 'cap', branch: 'feature/long', groupId: 'g', artifactId: 'a', version: `1.0.${i}`,
        repositoryUrl: null, creationDate: created, type: 'jar', latestVersion: i === RECORDS - 1, description: null,
      }),
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    }));
    await server.db.batchInsert('versions', rows, 1000);
  }, 300_000);
  afterAll(() => server?.close());

  it(`deletes ${RUN_DELETE_MAX.toLocaleString('en')} records at most, the rest at the next run`, async () => {
    const services = servicesOf(server);
    const policy = await createPolicy(services, RetentionPolicyCreate.parse({ name: 'cap', keepLast: 1, branches: ['feature/*'] }));
    expect((await runPolicy(services, policy.id, true)).wouldDelete).toBe(RECORDS - 1);
    expect((await runPolicy(services, policy.id, false)).deleted).toBe(RUN_DELETE_MAX);
    expect(await server.db('versions_trash').count({ n: '*' }).then(([r]) => Number(r!.n))).toBe(RUN_DELETE_MAX);
    expect((await runPolicy(services, policy.id, false)).deleted).toBe(RECORDS - 1 - RUN_DELETE_MAX);
    const left = await server.db('versions').select('version', 'latest_version');
    expect(left.map((r: { version: string; latest_version: unknown }) => [r.version, Boolean(r.latest_version)])).toEqual([[`1.0.${RECORDS - 1}`, true]]);
  }, 300_000);
});
