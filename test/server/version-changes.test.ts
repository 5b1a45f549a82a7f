// The events of changes other than a publish, as the trash and retention make them: a delete, a
// forced delete that promotes the next version (one latest.moved from and to), a restore.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markVersionChange } from '../../server/db/events.js';
import { type ApiEvent, feed } from '../../server/services/events.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('events of deletes and restores on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let cursor: string | undefined;
  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
  }, 180_000);
  afterAll(() => server?.close());

  async function newEvents(): Promise<unknown[][]> {
    const page = await feed({ db: server.db }, { after: cursor, limit: 1000, wait: 0 });
    cursor = page.next;
    return page.events.map((e: ApiEvent) => [e.type, e.data.version ?? null, e.data.from ?? null, e.data.to ?? null, e.data.seq ?? null]);
  }

  it('delete, forced delete with promotion, restore', async () => {
    for (const version of ['1.0.0', '2.0.0']) {
      await server.request('POST', '/v1/repositories', {
        token: admin,
        body: { projectName: 'tr', branch: 'main', artifact: { groupId: 'g', artifactId: 'a', version }, latestVersion: true },
      });
    }
    await newEvents();
    const key = { project_name: 'tr', branch: 'main', group_id: 'g', artifact_id: 'a' };

    // A forced delete of the latest: the next version takes over, in one transaction, one move.
    const latest = await server.db('versions').where({ ...key, version: '2.0.0' }).first();
    await server.db.transaction(async (trx) => {
      await markVersionChange(trx, 'latest');
      await trx('versions').where({ uid: latest.uid }).delete();
      await trx('versions').where({ ...key, version: '1.0.0' }).update({ latest_version: true });
      await markVersionChange(trx, null);
    });
    expect(await newEvents()).toEqual([
      ['version.deleted', '2.0.0', null, null, null],
      ['latest.moved', null, '2.0.0', '1.0.0', 3],
    ]);

    // A restore puts the row back: version.restored, and its latest flag moves latest again.
    await server.db.transaction(async (trx) => {
      await trx('versions').where({ ...key, version: '1.0.0' }).update({ latest_version: false });
      await markVersionChange(trx, 'restore');
      const { id: _id, latest_marker: _generated, ...row } = latest;
      await trx('versions').insert(row);
      await markVersionChange(trx, null);
    });
    expect(await newEvents()).toEqual([
      ['version.published', '1.0.0', null, null, null],
      ['latest.moved', null, '1.0.0', null, 4],
      ['version.restored', '2.0.0', null, null, null],
      ['latest.moved', null, null, '2.0.0', 5],
    ]);

    // A plain delete of the latest: latest moves to null.
    await server.db('versions').where({ uid: latest.uid }).delete();
    expect(await newEvents()).toEqual([
      ['version.deleted', '2.0.0', null, null, null],
      ['latest.moved', null, '2.0.0', null, 6],
    ]);
  });
});
