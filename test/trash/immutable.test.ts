// Immutable versions over HTTP: with --repoadmin_immutable_versions, a different record under
// matching coordinates is a 409 that changes nothing; an identical republish stays a 200.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
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
});
