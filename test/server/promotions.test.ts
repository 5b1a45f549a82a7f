// Environments and promotion (docs/api.md, "Environments and promotion"), on every database kind:
// the gates and their messages, who may promote where, rollbacks, re-promotion, the latest lookup
// and search by environment, vetoes, what deletes and retention spare, events and audit, and
// promotions of one key into one environment taking turns (in one server and across two).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPromote } from '../../server/policy/access.js';
import type { Actor } from '../../server/services/context.js';
import { toApiEvent } from '../../server/services/events.js';
import { dbKinds } from '../helpers/db.js';
import { waitFor } from '../helpers/instances.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const MINUTE = 60_000;

describe.each(dbKinds())('environments and promotion on %s', (kind) => {
  let server: TestServer;
  let clock = Date.parse('2026-11-28T10:00:00Z');
  let admin: string;
  /** ROLE_USER of p1, of p2; p1's tokens of the scopes promote and publish; the administrator's promote token. */
  let alice: string;
  let bob: string;
  let alicePromote: string;
  let alicePublish: string;
  let adminPromote: string;

  const request = (method: string, path: string, token: string | undefined, body?: unknown) => server.request(method, path, { token, body });
  const login = async (username: string, password: string) => (await request('POST', '/v1/authentication/generate-token', undefined, { username, password })).body.token as string;
  const makeUser = async (username: string, projectName: string) => {
    const made = await request('POST', '/v1/users', admin, { username, password: `${username}-secret-1`, projectName, role: 'ROLE_USER' });
    expect(made.status).toBe(201);
    return login(username, `${username}-secret-1`);
  };
  const makeToken = async (token: string, name: string, scope: string) => {
    const made = await request('POST', '/v1/tokens', token, { name, scope });
    expect(made.status, made.text).toBe(201);
    return made.body.token as string;
  };
  const publish = async (artifactId: string, version: string, projectName = 'p1', branch = 'main') => {
    const done = await request('POST', '/v1/repositories', admin, { projectName, branch, artifact: { groupId: 'g', artifactId, version }, latestVersion: true });
    expect([200, 201]).toContain(done.status);
    return done.body.uid as string;
  };
  const promote = (token: string | undefined, uid: string, environment: string, comment?: string) =>
    request('POST', '/v1/promotions', token, { uid, environment, ...(comment ? { comment } : {}) });
  const setEnvironments = (projectName: string, environments: unknown[]) => request('PUT', `/v1/projects/${projectName}/environments`, admin, { environments });

  beforeAll(async () => {
    server = await startTestServer({ kind, now: () => new Date(clock), config: { jwt: { ttlSeconds: 30 * 24 * 3600 } } });
    admin = await server.adminToken();
    alice = await makeUser('alice', 'p1');
    bob = await makeUser('bob', 'p2');
    alicePromote = await makeToken(alice, 'deploy', 'promote');
    alicePublish = await makeToken(alice, 'ci', 'publish');
    adminPromote = await makeToken(admin, 'admin-deploy', 'promote');
    const set = await setEnvironments('p1', [
      { name: 'dev' },
      { name: 'staging', requires: 'dev' },
      { name: 'prod', requires: 'staging', soakMinutes: 30, protected: true },
    ]);
    expect(set.status, set.text).toBe(200);
  }, 300_000);
  afterAll(() => server?.close());

  it('sets and lists environments; a bad list is 400, and only administrators set them', async () => {
    const listed = await request('GET', '/v1/projects/p1/environments', undefined);
    expect(listed.status).toBe(200);
    expect(listed.body.environments.map((e: { name: string }) => e.name)).toEqual(['dev', 'staging', 'prod']);
    expect(listed.body.environments[2]).toMatchObject({ requires: 'staging', soakMinutes: 30, protected: true });
    expect(listed.body.environments[0]).toMatchObject({ requires: null, soakMinutes: null, protected: false });

    const later = await setEnvironments('p9', [{ name: 'prod', requires: 'staging' }, { name: 'staging' }]);
    expect(later.status).toBe(400);
    expect(later.body.errors[0].path).toBe('environments[0].requires');
    expect((await setEnvironments('p9', [{ name: 'dev' }, { name: 'dev' }])).status).toBe(400);
    expect((await setEnvironments('p9', [{ name: 'dev', soakMinutes: 5 }])).status).toBe(400);
    expect((await setEnvironments('p9', [{ name: 'Prod' }])).status).toBe(400);
    expect((await request('PUT', '/v1/projects/p1/environments', alice, { environments: [] })).status).toBe(403);
    expect((await request('PUT', '/v1/projects/p1/environments', alicePromote, { environments: [] })).status).toBe(403);
    expect((await request('GET', '/v1/projects/none/environments', undefined)).body).toEqual({ projectName: 'none', environments: [] });
  });

  it('refuses by each gate with its message, and lets the version through once it holds', async () => {
    const uid = await publish('gates', '2.3.1');
    const toStaging = await promote(admin, uid, 'staging');
    expect(toStaging.status).toBe(409);
    expect(toStaging.body._message.message).toBe('requires dev: 2.3.1 has never been in dev');
    expect((await promote(admin, uid, 'dev')).status).toBe(201);
    expect((await promote(admin, uid, 'staging')).status).toBe(201);
    clock += 12 * MINUTE + 30_000;
    const early = await promote(admin, uid, 'prod');
    expect(early.status).toBe(409);
    expect(early.body._message.message).toBe('soak: 12 of 30 minutes in staging');
    clock += 18 * MINUTE;
    const prod = await promote(admin, uid, 'prod', 'CHG-1234');
    expect(prod.status, prod.text).toBe(201);
    expect(prod.body).toMatchObject({ uid, environment: 'prod', previousUid: null, rollback: false, comment: 'CHG-1234', version: '2.3.1' });
    expect(prod.body.promotedBy).toMatchObject({ username: 'admin', tokenId: null });

    const unknown = await promote(admin, uid, 'qa');
    expect(unknown.status).toBe(404);
    expect(unknown.body._message.message).toContain('no environment qa');
    // A record in the trash is not there to promote.
    const gone = await publish('gates', '2.3.2');
    await publish('gates', '2.3.3');
    expect((await request('DELETE', `/v1/repositories/${gone}`, admin)).status).toBe(204);
    expect((await promote(admin, gone, 'dev')).status).toBe(404);
  });

  it('promotes by coordinates; promoting the current version again records nothing', async () => {
    const uid = await publish('again', '1.0.0');
    const first = await request('POST', '/v1/promotions', alice, { projectName: 'p1', branch: 'main', groupId: 'g', artifactId: 'again', version: '1.0.0', environment: 'dev' });
    expect(first.status).toBe(201);
    expect(first.body.uid).toBe(uid);
    const again = await promote(alice, uid, 'dev');
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    const history = await request('GET', '/v1/promotions?projectName=p1&artifactId=again', undefined);
    expect(history.body.promotions).toHaveLength(1);
    const both = await request('POST', '/v1/promotions', alice, { uid, projectName: 'p1', environment: 'dev' });
    expect(both.status).toBe(400);
    expect((await request('POST', '/v1/promotions', alice, { projectName: 'p1', environment: 'dev' })).status).toBe(400);
    const missing = await request('POST', '/v1/promotions', alice, { projectName: 'p1', branch: 'main', groupId: 'g', artifactId: 'again', version: '9.9.9', environment: 'dev' });
    expect(missing.status).toBe(404);
  });

  it('marks a rollback by version order (2.9.0 after 2.10.0), with the previous version', async () => {
    const v210 = await publish('roll', '2.10.0');
    const v29 = await publish('roll', '2.9.0');
    const v211 = await publish('roll', '2.11.0');
    expect((await promote(alice, v210, 'dev')).body.rollback).toBe(false);
    const back = await promote(alice, v29, 'dev');
    expect(back.body).toMatchObject({ rollback: true, previousUid: v210, previousVersion: '2.10.0' });
    const forward = await promote(alice, v211, 'dev');
    expect(forward.body).toMatchObject({ rollback: false, previousUid: v29 });
    const history = await request('GET', '/v1/promotions?artifactId=roll&environment=dev&size=2', undefined);
    expect(history.body.promotions.map((p: { version: string }) => p.version)).toEqual(['2.11.0', '2.9.0']);
    expect(history.body.page).toEqual({ totalElements: 3, totalPages: 2, currentPage: 1, numberOfElements: 2 });
    const second = await request('GET', '/v1/promotions?artifactId=roll&environment=dev&size=2&page=2', undefined);
    expect(second.body.promotions.map((p: { version: string }) => p.version)).toEqual(['2.10.0']);
    expect((await request('GET', '/v1/promotions?size=0', undefined)).status).toBe(400);
    expect((await request('GET', '/v1/promotions?environment=PROD', undefined)).status).toBe(400);
  });

  it('lets administrators, users of the project and its promote tokens promote; protected environments only administrators', async () => {
    const uid = await publish('access', '1.0.0');
    expect((await promote(undefined, uid, 'dev')).status).toBe(401);
    expect((await promote(bob, uid, 'dev')).status).toBe(403);
    const publishToken = await promote(alicePublish, uid, 'dev');
    expect(publishToken.status).toBe(403);
    expect(publishToken.body._message.message).toContain('scope promote');
    const byToken = await promote(alicePromote, uid, 'dev');
    expect(byToken.status).toBe(201);
    expect(byToken.body.promotedBy.tokenId).toEqual(expect.any(String));
    expect(byToken.body.promotedBy.username).toBe('alice');
    expect((await promote(alice, uid, 'staging')).status).toBe(201);
    clock += 31 * MINUTE;
    // prod is protected: neither the project's user nor a token without a trusted publisher, not even the administrator's.
    for (const token of [alice, alicePromote, adminPromote]) {
      const refused = await promote(token, uid, 'prod');
      expect(refused.status).toBe(403);
      expect(refused.body._message.message).toContain('environment prod is protected');
    }
    expect((await promote(admin, uid, 'prod')).status).toBe(201);
    // A promote token cannot publish; the administrator's promote token promotes in any project's unprotected environments.
    expect((await request('POST', '/v1/repositories', alicePromote, { projectName: 'p1', branch: 'main', artifact: { groupId: 'g', artifactId: 'access', version: '9' } })).status).toBe(403);
    expect((await request('GET', '/v1/repositories/latest?groupId=g&artifactId=access', alicePromote)).status).toBe(200);
  });

  it('lets a token of a trusted publisher promote into exactly the environments it lists', () => {
    const token = (promoteEnvironments?: string[]): Actor => ({
      userId: 'u', username: 'ci', role: 'ROLE_USER', projectName: 'p1', mustChangePassword: false,
      projectToken: { id: 't', name: 'oidc', scope: 'publish', promoteEnvironments },
    });
    expect(() => checkPromote(token(['prod']), 'p1', { name: 'prod', protected: true })).not.toThrow();
    expect(() => checkPromote(token(['prod']), 'p1', { name: 'dev', protected: false })).toThrow(/only into prod, not dev/);
    expect(() => checkPromote(token(['prod']), 'p2', { name: 'prod', protected: true })).toThrow(/only in project "p1"/);
    expect(() => checkPromote(token(undefined), 'p1', { name: 'prod', protected: true })).toThrow(/protected/);
    expect(() => checkPromote(token(undefined), 'p1', { name: 'dev', protected: false })).not.toThrow();
  });

  it('answers the latest lookup and the search by environment', async () => {
    const old = await publish('where', '1.0.0');
    const current = await publish('where', '1.1.0');
    await publish('where', '1.2.0');
    await promote(admin, old, 'dev');
    await promote(admin, current, 'dev');
    const latest = await request('GET', '/v1/repositories/latest?groupId=g&artifactId=where&environment=dev', undefined);
    expect(latest.status).toBe(200);
    expect(latest.body.uid).toBe(current);
    const plain = await request('GET', '/v1/repositories/latest?groupId=g&artifactId=where', undefined);
    expect(plain.body.version).toBe('1.2.0');
    expect((await request('GET', '/v1/repositories/latest?groupId=g&artifactId=where&environment=prod', undefined)).status).toBe(404);
    expect((await request('GET', '/v1/repositories/latest?groupId=g&artifactId=where&environment=dev&branch=other', undefined)).status).toBe(404);
    expect((await request('GET', '/v1/repositories/latest?groupId=g&artifactId=where&environment=dev&projectName=p1', undefined)).body.uid).toBe(current);

    const found = await request('POST', '/v1/repositories/search', undefined, { artifactId: 'where', environment: 'dev' });
    expect(found.body.versionInformation.map((r: { uid: string }) => r.uid)).toEqual([current]);
    expect(found.body.page.totalElements).toBe(1);
    const none = await request('POST', '/v1/repositories/search', undefined, { artifactId: 'where', environment: 'prod' });
    expect(none.body.page.totalElements).toBe(0);
    expect((await request('GET', '/v1/projects/p1/environments', undefined)).body.environments[0].current).toContainEqual(
      expect.objectContaining({ groupId: 'g', artifactId: 'where', record: expect.objectContaining({ uid: current }), promotedBy: expect.objectContaining({ username: 'admin' }) }),
    );
  });

  it('vetoes a version: shown on the record, refused everywhere until lifted, an event and audit entries', async () => {
    const uid = await publish('veto', '3.0.0');
    expect((await request('PUT', `/v1/repositories/${uid}/veto`, bob, { reason: 'no' })).status).toBe(403);
    expect((await request('PUT', `/v1/repositories/${uid}/veto`, alice, {})).status).toBe(400);
    const vetoed = await request('PUT', `/v1/repositories/${uid}/veto`, alice, { reason: 'memory leak, INC-77' });
    expect(vetoed.status).toBe(200);
    expect(vetoed.body.veto).toMatchObject({ reason: 'memory leak, INC-77', by: 'alice', at: new Date(clock).toISOString() });
    expect((await request('GET', `/v1/repositories/${uid}`, undefined)).body.veto.reason).toBe('memory leak, INC-77');
    const searched = await request('POST', '/v1/repositories/search', undefined, { uid });
    expect(searched.body.versionInformation[0].veto.reason).toBe('memory leak, INC-77');
    const refused = await promote(admin, uid, 'dev');
    expect(refused.status).toBe(409);
    expect(refused.body._message.message).toBe('vetoed: memory leak, INC-77');
    expect(refused.body.gate).toBe('veto');

    // A republish of the same coordinates, and a delete and restore, keep the veto.
    expect(await publish('veto', '3.0.0')).toBe(uid);
    expect((await request('DELETE', `/v1/repositories/${uid}?force=true`, admin)).status).toBe(204);
    expect((await request('POST', `/v1/trash/${uid}/restore`, admin)).status).toBe(200);
    expect((await request('GET', `/v1/repositories/${uid}`, undefined)).body.veto.reason).toBe('memory leak, INC-77');

    const lifted = await request('DELETE', `/v1/repositories/${uid}/veto`, alice);
    expect(lifted.status).toBe(200);
    expect(lifted.body.veto).toBeNull();
    expect((await promote(admin, uid, 'dev')).status).toBe(201);

    const events = await server.db('events').where({ type: 'version.vetoed' }).select('data');
    expect(events.map((e: { data: string }) => JSON.parse(e.data).record.uid)).toContain(uid);
    // A veto, and lifting it, is no publish: the first publish and the republish are all.
    const published = await server.db('events').where({ type: 'version.published' }).select('data');
    expect(published.filter((e: { data: string }) => JSON.parse(e.data).record.uid === uid)).toHaveLength(2);
    const feed = await request('GET', '/v1/events?type=version.vetoed', admin);
    expect(feed.status).toBe(200);
    await waitFor(
      'the veto audit entries',
      async () => (await server.db('audit').whereIn('action', ['version.vetoed', 'version.veto_lifted']).where({ target: uid, outcome: 'ok' })).length === 2,
      30_000,
    );
  });

  it('emits version.promoted with the record, environment, previous uid, rollback and who, and audits promotions and environment changes', async () => {
    const a = await publish('events', '1.1.0');
    const b = await publish('events', '1.0.0');
    await promote(alicePromote, a, 'dev');
    await promote(alicePromote, b, 'dev');
    const rows = await server.db('events').where({ type: 'version.promoted' }).orderBy('id').select('data', 'project_name');
    const last = JSON.parse(rows.at(-1)!.data);
    expect(rows.at(-1)!.project_name).toBe('p1');
    expect(last).toMatchObject({ environment: 'dev', previousUid: a, rollback: true, by: { username: 'alice', tokenId: expect.any(String) } });
    expect(last.record.uid).toBe(b);
    // As webhooks and the feed show it: the record as the API answers with it, beside the promotion's fields.
    const shown = toApiEvent({ id: 1, seq: 1, type: 'version.promoted', projectName: 'p1', data: last, createdAt: new Date() }).data;
    expect(shown).toMatchObject({ uid: b, version: '1.0.0', projectName: 'p1', environment: 'dev', previousUid: a, rollback: true, veto: null });
    expect(shown.record).toBeUndefined();
    await waitFor(
      'the promotion audit entries',
      async () => (await server.db('audit').where({ action: 'version.promoted', target: `dev:${b}`, outcome: 'ok' })).length === 1,
      30_000,
    );
    await waitFor('the environments audit entry', async () => (await server.db('audit').where({ action: 'environments.changed', target: 'p1' })).length >= 1, 30_000);
  });

  it('keeps a current version from deletes (unless forced) and from retention, and says why in the dry run', async () => {
    const kept = await publish('keep', '1.0.0', 'p1', 'feature');
    const other = await publish('keep', '1.1.0', 'p1', 'feature');
    await publish('keep', '1.2.0', 'p1', 'feature');
    await promote(admin, kept, 'dev');
    const refused = await request('DELETE', `/v1/repositories/${kept}`, admin);
    expect(refused.status).toBe(409);
    expect(refused.body.reason).toBe('current_in_environment');
    expect(refused.body._message.message).toContain('current version in dev');

    const policy = await request('POST', '/v1/retention/policies', admin, { name: 'keep-test', projects: ['p1'], branches: ['feature'], protectedBranches: ['release/*'], keepLast: 1 });
    expect(policy.status, policy.text).toBe(201);
    const dry = await request('POST', `/v1/retention/policies/${policy.body.id}/run?dryRun=true`, admin);
    expect(dry.body).toMatchObject({ wouldDelete: 1, keptInEnvironments: 1 });
    const run = await request('POST', `/v1/retention/policies/${policy.body.id}/run?dryRun=false`, admin);
    expect(run.body).toMatchObject({ deleted: 1, keptInEnvironments: 1 });
    expect((await request('GET', `/v1/repositories/${kept}`, undefined)).status).toBe(200);
    expect((await request('GET', `/v1/repositories/${other}`, undefined)).status).toBe(404);

    expect((await request('DELETE', `/v1/repositories/${kept}?force=true`, admin)).status).toBe(204);
    expect(await server.db('environment_current').where({ uid: kept })).toEqual([]);
    expect((await request('GET', '/v1/repositories/latest?groupId=g&artifactId=keep&environment=dev', undefined)).status).toBe(404);
  });

  it('a promotion and a delete of one record at once: either the delete is refused or the promotion finds nothing', async () => {
    const uids: string[] = [];
    for (let i = 0; i < 6; i++) uids.push(await publish('race-delete', `7.0.${i}`));
    await publish('race-delete', '7.1.0');
    const answers = await Promise.all(uids.flatMap((uid) => [promote(admin, uid, 'dev'), request('DELETE', `/v1/repositories/${uid}`, admin)]));
    for (let i = 0; i < uids.length; i++) {
      const [promoted, deleted] = [answers[2 * i]!, answers[2 * i + 1]!];
      expect([promoted.status, deleted.status], `${promoted.text} ${deleted.text}`).toSatisfy(
        ([p, d]: number[]) => (p === 201 && d === 409) || (p === 404 && d === 204) || (p === 201 && d === 204),
      );
    }
    // No environment names a record that is gone.
    const dangling = await server.db('environment_current as c').leftJoin('versions as v', 'v.uid', 'c.uid').whereNull('v.uid').select('c.uid');
    expect(dangling).toEqual([]);
  }, 120_000);

  // Only where two connections can hold and wait for locks: the embedded database has one connection,
  // on which a promotion and a delete simply take turns (the test above covers that).
  if (kind !== 'pglite') it('a promotion waits for a delete of its record under way, and then finds nothing', async () => {
    const uid = await publish('held', '1.0.0');
    await publish('held', '1.1.0');
    // A delete under way: the record's row locked and deleted, not yet committed.
    const trx = await server.db.transaction();
    await trx('versions').where({ uid }).forUpdate().select('uid');
    await trx('versions').where({ uid }).delete();
    const promotion = promote(admin, uid, 'dev');
    const waiting = kind === 'mysql'
      ? async () =>
          Number((await server.db.raw("select count(*) as n from information_schema.innodb_trx t join information_schema.processlist p on p.id = t.trx_mysql_thread_id where t.trx_state = 'LOCK WAIT' and p.db = database()"))[0][0].n) > 0
      : async () => Number((await server.db.raw("select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows[0].n) > 0;
    let settled = false;
    void promotion.finally(() => (settled = true));
    await waitFor('the promotion waiting for the record, or answering', async () => settled || (await waiting()), 60_000);
    await trx.commit();
    expect((await promotion).status).toBe(404);
    expect(await server.db('environment_current').where({ uid })).toEqual([]);
  }, 120_000);

  it('serializes promotions of one key into one environment: one current, every entry in commit order', async () => {
    const versions = Array.from({ length: 8 }, (_, i) => `5.0.${i}`);
    const uids = [];
    for (const v of versions) uids.push(await publish('race', v));
    const answers = await Promise.all(uids.map((uid) => promote(admin, uid, 'dev')));
    expect(answers.map((a) => a.status)).toEqual(versions.map(() => 201));
    await expectOneChain(server, 'race', uids);
  }, 120_000);
});

/** Exactly one current version of the artifact in dev, and one history entry per uid whose previous uids chain in commit order. */
async function expectOneChain(server: TestServer, artifactId: string, uids: string[]): Promise<void> {
  const current = await server.db('environment_current').where({ artifact_id: artifactId, environment: 'dev' });
  expect(current).toHaveLength(1);
  const history = await server.db('promotions').where({ artifact_id: artifactId, environment: 'dev' }).orderBy('seq');
  expect(history.map((h: { uid: string }) => h.uid).sort()).toEqual([...uids].sort());
  expect(history[0].previous_uid).toBeNull();
  for (let i = 1; i < history.length; i++) expect(history[i].previous_uid).toBe(history[i - 1].uid);
  expect(current[0].uid).toBe(history.at(-1).uid);
}

describe.each(dbKinds().filter((kind) => kind !== 'pglite'))('promotions through two servers on %s', (kind) => {
  let one: TestServer;
  let two: TestServer;
  beforeAll(async () => {
    one = await startTestServer({ kind });
    two = await startTestServer({ kind, database: one.database });
  }, 300_000);
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  it('take turns: one current version, every entry in commit order', async () => {
    const admins = [await one.adminToken(), await two.adminToken()];
    const servers = [one, two];
    expect((await one.request('PUT', '/v1/projects/p1/environments', { token: admins[0], body: { environments: [{ name: 'dev' }] } })).status).toBe(200);
    const uids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const done = await one.request('POST', '/v1/repositories', { token: admins[0], body: { projectName: 'p1', branch: 'main', artifact: { groupId: 'g', artifactId: 'twin', version: `1.0.${i}` } } });
      uids.push(done.body.uid);
    }
    const answers = await Promise.all(uids.map((uid, i) => servers[i % 2]!.request('POST', '/v1/promotions', { token: admins[i % 2], body: { uid, environment: 'dev' } })));
    expect(answers.map((a) => a.status)).toEqual(uids.map(() => 201));
    await expectOneChain(one, 'twin', uids);
  }, 120_000);
});
