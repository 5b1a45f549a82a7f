// Concurrent publishes and user creations on PostgreSQL and MariaDB/MySQL (and, serialised, on PGlite).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../../common/errors.js';
import { VersionRecord } from '../../common/schemas/repositories.js';
import { loadConfig } from '../../server/config.js';
import type { SignedCredential } from '../../server/services/context.js';
import { publish } from '../../server/services/versions.js';
import { servicesOf } from '../trash/services.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('concurrency on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  it('50 concurrent latest publishes of one key leave 50 records and exactly one latest', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        server.request('POST', '/v1/repositories', {
          token: admin,
          body: { projectName: 'race', branch: 'main', artifact: { groupId: 'race', artifactId: 'lib', version: `1.0.${i}` }, latestVersion: true },
        }),
      ),
    );
    expect(answers.map((a) => a.status).filter((s) => s !== 201)).toEqual([]);
    const rows = await server.db('versions').where({ group_id: 'race' });
    expect(rows).toHaveLength(50);
    expect(rows.filter((r: { latest_version: boolean }) => r.latest_version)).toHaveLength(1);
  });

  it('concurrent republishes of the same coordinates never duplicate', async () => {
    const body = { projectName: 'race', branch: 'main', artifact: { groupId: 'race', artifactId: 'same', version: '2.0.0' }, latestVersion: true };
    const answers = await Promise.all(Array.from({ length: 20 }, () => server.request('POST', '/v1/repositories', { token: admin, body })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19);
    expect(new Set(answers.map((a) => a.body.uid)).size).toBe(1);
    expect(await server.db('versions').where({ artifact_id: 'same' })).toHaveLength(1);
  });

  it('20 concurrent creations of one user name: one 201 and nineteen 409', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        server.request('POST', '/v1/users', { token: admin, body: { username: 'racer', password: 'racer-secret', projectName: 'p', role: 'ROLE_USER' } }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(409)]);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.valid === false)).toBe(true);
    expect(await server.db('users').where({ username: 'racer' })).toHaveLength(1);
  });

  it('keeps the summary counts equal to the records they count', async () => {
    const actual = await server.db('versions')
      .select('project_name', 'branch', 'group_id', 'artifact_id', 'type', 'latest_version')
      .count({ n: '*' })
      .groupBy('project_name', 'branch', 'group_id', 'artifact_id', 'type', 'latest_version');
    const summary = await server.db('version_counts').select('*').where('records', '>', 0);
    const key = (r: Record<string, unknown>) => [r.project_name, r.branch, r.group_id, r.artifact_id, r.type, r.latest_version, Number(r.n ?? r.records)].join('|');
    expect(summary.map(key).sort()).toEqual(actual.map(key).sort());
    const search = await server.request('POST', '/v1/repositories/search', { body: { groupId: 'race' } });
    expect(search.body.page.totalElements).toBe(51);
    const latest = await server.request('POST', '/v1/repositories/search', { body: { groupId: 'race', latestVersion: true } });
    expect(latest.body.page.totalElements).toBe(2);
  });

  it('the schema itself refuses a second latest record of a key', async () => {
    const row = await server.db('versions').where({ group_id: 'race', latest_version: true }).first();
    const clash = server.db('versions').where({ group_id: 'race', artifact_id: 'lib' }).whereNot({ id: row.id }).limit(1).first();
    const other = await clash;
    await expect(server.db('versions').where({ id: other.id }).update({ latest_version: true })).rejects.toMatchObject({ code: kind === 'mysql' ? 'ER_DUP_ENTRY' : '23505' });
  });
});

describe.each(dbKinds())('concurrent publishes of one immutable version on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    const { immutableVersions } = loadConfig(['--repoadmin_immutable_versions', '^(?!.*-SNAPSHOT$)'], {});
    server = await startTestServer({ kind, config: { immutableVersions } });
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  const body = (artifactId: string, i: number, latestVersion: boolean) => ({
    projectName: 'race',
    branch: 'main',
    artifact: { groupId: 'race', artifactId, version: '1.0.0' },
    repositoryUrl: `https://repo.example/build-${i}`,
    creationDate: '2026-05-01T10:00:00Z',
    latestVersion,
  });

  // Latest and not: on MariaDB and MySQL only a latest publish took the key's lock before.
  for (const latest of [true, false]) {
    it(`20 at once with different content (latest: ${latest}): exactly one is published, the others are 409`, async () => {
      const artifactId = `immutable-${latest}`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => server.request('POST', '/v1/repositories', { token: admin, body: body(artifactId, i, latest) })),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      const winner = answers.findIndex((a) => a.status === 201);
      const rows = await server.db('versions').where({ artifact_id: artifactId });
      expect(rows.map((r: { repository_url: string; uid: string }) => [r.repository_url, r.uid])).toEqual([[`https://repo.example/build-${winner}`, answers[winner]!.body.uid]]);
      expect(answers.filter((a) => a.status === 409).every((a) => a.body._message.code === 'conflict' && a.body.uid === answers[winner]!.body.uid)).toBe(true);
    });
  }

  it('20 started in one tick with different content: exactly one is published, the others are 409 (PGlite interleaves them too)', async () => {
    // Over HTTP, PGlite (one connection) may finish one publish before the next request is read;
    // called in one tick, every publish's first statement is queued before any second one.
    const services = servicesOf(server, undefined, server.config);
    const claims = JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString('utf8'));
    const credential: SignedCredential = { kind: 'session', userId: claims.uid, username: claims.sub, tokenVersion: claims.tv };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => publish(services, credential, VersionRecord.parse(body('immutable-tick', i, i % 2 === 0)))),
    );
    const published = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [{ i, uid: o.value.uid }] : []));
    expect(published).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o.reason as AppError).code)).toEqual(Array(19).fill('conflict'));
    const rows = await server.db('versions').where({ artifact_id: 'immutable-tick' });
    expect(rows.map((r: { repository_url: string; uid: string }) => [r.repository_url, r.uid])).toEqual([[`https://repo.example/build-${published[0]!.i}`, published[0]!.uid]]);
  });
});

describe.runIf(dbKinds().includes('postgres'))('racing publishes on PostgreSQL', () => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer({ kind: 'postgres' });
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  it('400 concurrent mixed publishes over 4 keys (latest or not, new or republished, two types): no 5xx, one latest per key', async () => {
    // A fixed pseudo-random mix, so a failure can be replayed.
    let seed = 11;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor(seed / 65536) % n;
    };
    const bodies = Array.from({ length: 400 }, () => ({
      projectName: 'mix',
      branch: ['main', 'dev'][next(2)],
      artifact: { groupId: 'mix', artifactId: ['a', 'b'][next(2)], version: `1.0.${next(12)}` },
      type: ['LIBRARY', 'SERVICE'][next(2)],
      latestVersion: next(3) === 0,
    }));
    const answers = await Promise.all(bodies.map((body) => server.request('POST', '/v1/repositories', { token: admin, body })));
    expect(answers.filter((a) => a.status >= 500).map((a) => a.text), server.logs.filter((l) => /"level":[45]0/.test(l)).join('\n')).toEqual([]);
    expect(answers.every((a) => a.status === 200 || a.status === 201)).toBe(true);
    const latest = await server.db('versions').where({ group_id: 'mix', latest_version: true }).select('branch', 'artifact_id');
    const keys = latest.map((r: { branch: string; artifact_id: string }) => `${r.branch}/${r.artifact_id}`).sort();
    expect(keys).toEqual([...new Set(keys)]);
    expect(keys).toEqual(['dev/a', 'dev/b', 'main/a', 'main/b']);
    // The summary counts agree with the records after the race.
    const counted = await server.db('version_counts').where({ group_id: 'mix' }).sum({ n: 'records' }).first();
    const records = await server.db('versions').where({ group_id: 'mix' }).count({ n: '*' }).first();
    expect(Number(counted?.n)).toBe(Number(records?.n));
  });
});
