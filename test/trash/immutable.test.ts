// Immutable versions over HTTP: with --repoadmin_immutable_versions, a different record under
// matching coordinates is a 409 that changes nothing; an identical republish stays a 200. Tried as
// an attacker would: a forced delete, an emptied trash and a restore never bring other content back
// under an immutable version, and retention policies leave immutable versions alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetentionPolicyCreate } from '../../common/schemas/retention.js';
import { loadConfig } from '../../server/config.js';
import { emptyTrash } from '../../server/db/trash.js';
import { createPolicy, runPolicy } from '../../server/services/retention.js';
import { deleteRecord } from '../../server/services/trash.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { ADMIN, servicesOf } from './services.js';

describe.each(dbKinds())('immutable versions on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    const { immutableVersions } = loadConfig(['--repoadmin_immutable_versions', '^(?!.*-SNAPSHOT$)'], {});
    server = await startTestServer({ kind, config: { immutableVersions } });
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  const record = (version: string, extra: Record<string, unknown> = {}) => ({
    projectName: 'p',
    branch: 'main',
    artifact: { groupId: 'g', artifactId: 'lib', version },
    repositoryUrl: 'https://repo.example/lib',
    creationDate: '2026-05-01T10:00:00Z',
    description: 'first',
    ...extra,
  });
  const publish = (body: unknown) => server.request('POST', '/v1/repositories', { token: admin, body });
  const stored = (version: string) => server.db('versions').where({ version }).first();

  it('a different record under an immutable release is a 409 and changes nothing', async () => {
    const first = await publish(record('1.0.0', { latestVersion: true }));
    expect(first.status).toBe(201);
    const before = await stored('1.0.0');
    for (const change of [{ description: 'second' }, { repositoryUrl: 'https://other.example/lib' }, { creationDate: '2026-05-02T10:00:00Z' }, { type: 'war' }]) {
      const answer = await publish(record('1.0.0', change));
      expect(answer.status).toBe(409);
      expect(answer.body._message).toMatchObject({ code: 'conflict', message: expect.stringMatching(/is immutable/) });
    }
    expect(await stored('1.0.0')).toEqual(before);
  });

  it('an identical republish is a 200, also without a date or with another latest flag', async () => {
    const answer = await publish(record('1.0.0', { latestVersion: true }));
    expect(answer.status).toBe(200);
    const before = await stored('1.0.0');
    expect((await publish({ ...record('1.0.0'), creationDate: undefined })).status).toBe(200);
    expect((await stored('1.0.0')).creation_date).toEqual(before.creation_date);
    expect((await publish(record('1.0.0', { latestVersion: false }))).status).toBe(200);
    expect(Boolean((await stored('1.0.0')).latest_version)).toBe(false);
  });

  it('versions the expression does not match stay replaceable', async () => {
    expect((await publish(record('1.1.0-SNAPSHOT'))).status).toBe(201);
    expect((await publish(record('1.1.0-SNAPSHOT', { description: 'rebuilt' }))).status).toBe(200);
    expect((await stored('1.1.0-SNAPSHOT')).description).toBe('rebuilt');
  });

  it('deleting an immutable record needs force', async () => {
    const s = servicesOf(server, undefined, server.config);
    const { uid } = await stored('1.0.0');
    await expect(deleteRecord(s, ADMIN, uid, false)).rejects.toMatchObject({ code: 'conflict', details: { reason: 'immutable_version' } });
    await deleteRecord(s, ADMIN, uid, true);
    expect(await stored('1.0.0')).toBeUndefined();
  });

  const forceDelete = (uid: string) => server.request('DELETE', `/v1/repositories/${uid}?force=true`, { token: admin });
  const restore = (uid: string) => server.request('POST', `/v1/trash/${uid}/restore`, { token: admin });
  const storedOf = (artifactId: string, version: string) => server.db('versions').where({ artifact_id: artifactId, version }).first();
  const other = (artifactId: string, version: string, extra: Record<string, unknown>) => {
    const base = record(version, extra);
    return { ...base, artifact: { ...base.artifact, artifactId } };
  };

  it('after a forced delete, a republish with other content is a 409 naming the rule; the same content comes back', async () => {
    const first = await publish(other('gone', '2.0.0', { latestVersion: true }));
    expect(first.status).toBe(201);
    const original = await storedOf('gone', '2.0.0');
    expect((await forceDelete(first.body.uid)).status).toBe(204);
    for (const change of [{ repositoryUrl: 'https://attacker.example/lib' }, { description: 'second' }, { type: 'war' }, { creationDate: '2026-05-02T10:00:00Z' }]) {
      const answer = await publish(other('gone', '2.0.0', change));
      expect(answer.status).toBe(409);
      expect(answer.body._message).toMatchObject({ code: 'conflict', message: expect.stringMatching(/is immutable .* never comes back with other content/) });
    }
    expect(await storedOf('gone', '2.0.0')).toBeUndefined();
    // The same content, also without a date (it takes the original's), publishes again.
    const again = await publish({ ...other('gone', '2.0.0', { latestVersion: true }), creationDate: undefined });
    expect(again.status).toBe(201);
    expect((await storedOf('gone', '2.0.0')).creation_date).toEqual(original.creation_date);
  });

  it('after the trash was emptied, a republish with other content is still a 409', async () => {
    const first = await publish(other('purged', '2.0.0', {}));
    expect((await forceDelete(first.body.uid)).status).toBe(204);
    await emptyTrash(server.db, new Date(Date.now() + 60_000), 0);
    expect(await server.db('versions_trash').where({ artifact_id: 'purged' }).first()).toBeUndefined();
    const answer = await publish(other('purged', '2.0.0', { repositoryUrl: 'https://attacker.example/lib' }));
    expect(answer.status).toBe(409);
    expect(await storedOf('purged', '2.0.0')).toBeUndefined();
    expect((await publish(other('purged', '2.0.0', {}))).status).toBe(201);
  });

  it('the original record restores from the trash; a record with other content does not', async () => {
    const first = await publish(other('restored', '2.0.0', {}));
    expect((await forceDelete(first.body.uid)).status).toBe(204);
    const restored = await restore(first.body.uid);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ uid: first.body.uid, repositoryUrl: 'https://repo.example/lib', description: 'first' });
    // A record of the coordinates deleted while the version was not immutable yet sits in the trash
    // with other content; the version's record is deleted since, and its content kept.
    const older = await publish(other('older', '2.0.0', { description: 'older' }));
    await deleteRecord(servicesOf(server, undefined, { ...server.config, immutableVersions: undefined }), ADMIN, older.body.uid, true);
    const current = await publish(other('older', '2.0.0', {}));
    expect(current.status).toBe(201);
    expect((await forceDelete(current.body.uid)).status).toBe(204);
    const refused = await restore(older.body.uid);
    expect(refused.status).toBe(409);
    expect(refused.body._message).toMatchObject({ code: 'conflict', message: expect.stringMatching(/is immutable/) });
    expect(await storedOf('older', '2.0.0')).toBeUndefined();
    expect((await restore(current.body.uid)).status).toBe(200);
  });

  it('retention policies leave immutable versions alone, and the dry run says how many', async () => {
    for (const version of ['3.0.0', '3.1.0', '3.2.0-SNAPSHOT', '3.3.0-SNAPSHOT', '3.4.0']) {
      expect((await publish({ ...other('kept', version, { latestVersion: version === '3.4.0' }), branch: 'feature/x' })).status).toBe(201);
    }
    const s = servicesOf(server, undefined, server.config);
    const policy = await createPolicy(s, RetentionPolicyCreate.parse({ name: 'features', branches: ['feature/*'], keepLast: 1 }));
    const dry = await runPolicy(s, policy.id, true);
    expect(dry).toMatchObject({ wouldDelete: 2, kept: 3, keptImmutable: 2 });
    expect(dry.sample.map((r) => r.version)).toEqual(['3.2.0-SNAPSHOT', '3.3.0-SNAPSHOT']);
    const run = await runPolicy(s, policy.id, false);
    expect(run).toMatchObject({ deleted: 2, kept: 3, keptImmutable: 2 });
    const left = await server.db('versions').where({ artifact_id: 'kept' }).orderBy('version').pluck('version');
    expect(left).toEqual(['3.0.0', '3.1.0', '3.4.0']);
  });
});
