// Deleting records and the trash, on every database kind: the latest flag moves atomically, deletes
// and restores race safely with each other and with publishes, and the trash empties after its days.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyTrash } from '../../server/db/trash.js';
import { deleteRecord, restoreRecord, trashPage } from '../../server/services/trash.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { ADMIN, publishAsAdmin, servicesOf, userOf } from './services.js';

describe.each(dbKinds())('deleting records on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ kind });
  });
  afterAll(() => server?.close());

  const record = (artifactId: string, version: string, latestVersion = false, projectName = 'p1') => ({
    projectName,
    branch: 'main',
    artifact: { groupId: 'g', artifactId, version },
    latestVersion,
  });
  const rowsOf = (artifactId: string) => server.db('versions').where({ artifact_id: artifactId }).orderBy('version');
  const latestOf = async (artifactId: string) => (await rowsOf(artifactId)).filter((r) => Boolean(r.latest_version)).map((r) => r.version);

  it('moves a record to the trash, out of search and counts; a latest needs force and the highest remaining version takes over', async () => {
    const s = servicesOf(server);
    // Published out of order: 1.10.0 is the highest by version order, 1.9.0 was published last.
    const uids: Record<string, string> = {};
    for (const v of ['1.2.0', '1.10.0', '1.0.0']) uids[v] = (await publishAsAdmin(server, record('a', v))).uid;
    uids['1.9.0'] = (await publishAsAdmin(server, record('a', '1.9.0', true))).uid;

    await expect(deleteRecord(s, ADMIN, uids['1.9.0']!, false)).rejects.toMatchObject({ code: 'conflict' });
    expect(await latestOf('a')).toEqual(['1.9.0']);

    const { latestMovedTo } = await deleteRecord(s, ADMIN, uids['1.9.0']!, true);
    expect(latestMovedTo).toBe('1.10.0');
    expect(await latestOf('a')).toEqual(['1.10.0']);
    const events = (await server.db('events').select('type', 'data').orderBy('id')).map((e: { type: string; data: string }) => ({ type: e.type, data: JSON.parse(e.data) }));
    expect(events.filter((e) => e.type === 'version.deleted').map((e) => e.data.record.version)).toEqual(['1.9.0']);
    expect(events.filter((e) => e.type === 'latest.moved').at(-1)!.data).toMatchObject({ from: '1.9.0', to: '1.10.0' });
    const search = await server.request('POST', '/v1/repositories/search', { body: { artifactId: 'a' } });
    expect(search.body.page.totalElements).toBe(3);
    expect(search.body.versionInformation.map((v: { version: string }) => v.version)).not.toContain('1.9.0');
    expect((await server.request('GET', `/v1/repositories/${uids['1.9.0']}`)).status).toBe(404);

    await deleteRecord(s, ADMIN, uids['1.0.0']!, false);
    expect(await latestOf('a')).toEqual(['1.10.0']);
    const trash = await trashPage(s, undefined, { page: 1, size: 20 });
    expect(trash.records.map((r) => r.version)).toEqual(['1.0.0', '1.9.0']);
    expect(trash.records[1]!.latestVersion).toBe(true);
    expect(trash.records[0]!.deletedBy).toBe('admin');
  });

  it('deleting the last record of a key leaves no latest and nothing else', async () => {
    const s = servicesOf(server);
    const { uid } = await publishAsAdmin(server, record('only', '1.0.0', true));
    expect((await deleteRecord(s, ADMIN, uid, true)).latestMovedTo).toBeNull();
    expect(await rowsOf('only')).toEqual([]);
  });

  it('of 10 concurrent deletes of one record, one succeeds and nine find nothing', async () => {
    const s = servicesOf(server);
    const { uid } = await publishAsAdmin(server, record('race', '1.0.0'));
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => deleteRecord(s, ADMIN, uid, false)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code)).toEqual(Array(9).fill('not_found'));
    expect(await server.db('versions_trash').where({ uid })).toHaveLength(1);
  });

  it('forced deletes of the latest racing latest publishes of the same key leave exactly one latest', async () => {
    const s = servicesOf(server);
    const published: string[] = [];
    for (let i = 0; i < 8; i++) published.push((await publishAsAdmin(server, record('mixed', `2.0.${i}`, i === 7))).uid);
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 8; i++) {
      work.push(deleteRecord(s, ADMIN, published[i]!, true).catch(() => undefined));
      work.push(publishAsAdmin(server, record('mixed', `3.0.${i}`, i % 2 === 0)));
    }
    await Promise.all(work);
    const rows = await rowsOf('mixed');
    expect(rows.map((r) => r.version).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `3.0.${i}`));
    expect(rows.filter((r) => Boolean(r.latest_version))).toHaveLength(1);
  });

  // Who may delete, list and restore (a ROLE_USER its own project's) is the endpoints' access rule,
  // decided before these services run: test/trash/http.test.ts and test/access.test.ts.
  it("a ROLE_USER's record goes to its project's trash and comes back; a restore of coordinates published again is a conflict", async () => {
    const s = servicesOf(server);
    const { uid } = await publishAsAdmin(server, record('mine', '1.0.0', false, 'p2'));
    await deleteRecord(s, userOf('p2'), uid, false);
    expect((await trashPage(s, 'p2', { page: 1, size: 20 })).records.map((r) => r.uid)).toEqual([uid]);
    expect((await trashPage(s, 'p1', { page: 1, size: 20 })).records.map((r) => r.uid)).not.toContain(uid);

    const restored = await restoreRecord(s, userOf('p2'), uid);
    expect(restored.uid).toBe(uid);
    expect((await server.request('GET', `/v1/repositories/${uid}`)).status).toBe(200);
    await expect(restoreRecord(s, ADMIN, uid)).rejects.toMatchObject({ code: 'not_found' });

    await deleteRecord(s, ADMIN, uid, false);
    const again = await publishAsAdmin(server, record('mine', '1.0.0', false, 'p2'));
    await expect(restoreRecord(s, ADMIN, uid)).rejects.toMatchObject({ code: 'conflict' });
    expect((await rowsOf('mine')).map((r) => r.uid)).toEqual([again.uid]);
    expect(await server.db('versions_trash').where({ uid })).toHaveLength(1);
  });

  it('a restored latest takes the flag back from a lower version, not from a higher one', async () => {
    const s = servicesOf(server);
    await publishAsAdmin(server, record('back', '1.0.0'));
    const top = await publishAsAdmin(server, record('back', '2.0.0', true));
    await deleteRecord(s, ADMIN, top.uid, true);
    expect(await latestOf('back')).toEqual(['1.0.0']);
    await restoreRecord(s, ADMIN, top.uid);
    expect(await latestOf('back')).toEqual(['2.0.0']);

    await deleteRecord(s, ADMIN, top.uid, true);
    await publishAsAdmin(server, record('back', '3.0.0', true));
    const restored = await restoreRecord(s, ADMIN, top.uid);
    expect(restored.latestVersion).toBe(false);
    expect(await latestOf('back')).toEqual(['3.0.0']);
  });

  it('the summary counts follow deletes and restores', async () => {
    const actual = await server.db('versions').select('project_name', 'branch', 'group_id', 'artifact_id', 'type', 'latest_version').count({ n: '*' })
      .groupBy('project_name', 'branch', 'group_id', 'artifact_id', 'type', 'latest_version');
    const summary = await server.db('version_counts').select('*').where('records', '>', 0);
    const key = (r: Record<string, unknown>) => [r.project_name, r.branch, r.group_id, r.artifact_id, r.type, Boolean(r.latest_version), Number(r.n ?? r.records)].join('|');
    expect(summary.map(key).sort()).toEqual(actual.map(key).sort());
  });

  it('emptying the trash removes only what was deleted more than its days ago', async () => {
    const day = 86_400_000;
    const start = new Date('2026-01-10T00:00:00Z');
    const old = await publishAsAdmin(server, record('purge', '1.0.0'));
    const recent = await publishAsAdmin(server, record('purge', '2.0.0'));
    await deleteRecord(servicesOf(server, () => start), ADMIN, old.uid, false);
    await deleteRecord(servicesOf(server, () => new Date(start.getTime() + 3 * day)), ADMIN, recent.uid, false);
    const inTrash = () => server.db('versions_trash').where({ artifact_id: 'purge' }).pluck('version');
    // Everything else in the trash was deleted now (2026 and later): not touched at these times.
    expect(await emptyTrash(server.db, new Date(start.getTime() + 7 * day), 7)).toBe(0);
    expect(await emptyTrash(server.db, new Date(start.getTime() + 7 * day + 1), 7)).toBe(1);
    expect(await inTrash()).toEqual(['2.0.0']);
    expect(await emptyTrash(server.db, new Date(start.getTime() + 10 * day + 1), 7)).toBe(1);
    expect(await inTrash()).toEqual([]);
    await expect(restoreRecord(servicesOf(server), ADMIN, old.uid)).rejects.toMatchObject({ code: 'not_found' });
  });
});
