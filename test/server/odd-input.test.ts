// Odd input on every route answers in the error shape, never 500: NUL characters, versions whose
// sort key grows on lower-casing, dates that leave the four-digit years, repeated query parameters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertVersion } from '../../server/db/versions.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const record = (over: Record<string, unknown> = {}, artifact: Record<string, unknown> = {}) => ({
  projectName: 'odd',
  branch: 'main',
  artifact: { groupId: 'org.odd', artifactId: 'lib', version: '1.0.0', ...artifact },
  ...over,
});

describe.each(dbKinds())('odd input on %s', (kind) => {
  let server: TestServer;
  let admin: string;

  const publish = (body: unknown) => server.request('POST', '/v1/repositories', { body, token: admin });
  const search = (body: unknown, query = '') => server.request('POST', `/v1/repositories/search${query}`, { body });

  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  it.each([
    ['projectName', record({ projectName: 'o\u0000dd' })],
    ['branch', record({ branch: 'ma\u0000in' })],
    ['artifact.groupId', record({}, { groupId: 'org\u0000' })],
    ['artifact.artifactId', record({}, { artifactId: '\u0000' })],
    ['artifact.version', record({}, { version: '1.0\u0000' })],
    ['type', record({ type: 'LIB\u0000' })],
    ['description', record({ description: 'x\u0000y' })],
    ['repositoryUrl', record({ repositoryUrl: 'https://git.odd.test/a\u0000.git' })],
  ])('rejects a NUL character in %s of a publish with 400', async (path, body) => {
    const res = await publish(body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path, message: 'must not contain NUL characters' }]);
  });

  it.each([
    ['projectName', record({ projectName: 'o\tdd' })],
    ['branch', record({ branch: 'main\n' })],
    ['artifact.groupId', record({}, { groupId: 'org\u001b[31m' })],
    ['artifact.artifactId', record({}, { artifactId: 'a\u007f' })],
    ['artifact.version', record({}, { version: '1.0\u0085' })],
    ['type', record({ type: 'LIB\rRARY' })],
  ])('rejects a control character in %s of a publish with 400', async (path, body) => {
    const res = await publish(body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path, message: 'must not contain control characters (tab, line break, escape and the like)' }]);
  });

  it.each([
    ['projectName', record({ projectName: 'my project' })],
    ['branch', record({ branch: 'feature x' })],
    ['artifact.groupId', record({}, { groupId: 'com example' })],
    ['artifact.artifactId', record({}, { artifactId: ' lib' })],
    ['artifact.version', record({}, { version: 'not a version!' })],
    ['artifact.version', record({}, { version: '1.0\u00a0' })],
    ['branch', record({ branch: 'main\u2028' })],
  ])('rejects white space in %s of a publish with 400', async (path, body) => {
    const res = await publish(body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path, message: 'must not contain white space' }]);
  });

  it('keeps a type with a space, and a record with white space stored before the rule stays readable', async () => {
    const typed = await publish(record({ type: 'SHARED LIBRARY' }, { version: '1.0.1' }));
    expect(typed.status, JSON.stringify(typed.body)).toBeLessThan(300);
    const stored = await upsertVersion(server.db, {
      projectName: 'odd', branch: 'old branch', groupId: 'com example', artifactId: 'lib', version: 'not a version!',
      repositoryUrl: null, creationDate: new Date(), type: 'LIBRARY', latestVersion: true, description: null,
    });
    const found = await search({ groupId: 'com example', version: 'not a version!' });
    expect(found.status).toBe(200);
    expect(found.body.versionInformation).toMatchObject([{ uid: stored!.uid, branch: 'old branch' }]);
    expect((await server.request('GET', `/v1/repositories/${stored!.uid}`)).body).toMatchObject({ groupId: 'com example' });
    const latest = await server.request('GET', '/v1/repositories/latest?groupId=com%20example&artifactId=lib&branch=old%20branch&projectName=odd');
    expect(latest.body.version).toBe('not a version!');
  });

  it('keeps the line breaks and tabs of a description', async () => {
    const description = '# Notes\r\n\n- one\n\tindented';
    const res = await publish(record({ description }));
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    const found = await server.request('GET', `/v1/repositories/${res.body.uid}`);
    expect(found.body.description).toBe(description);
  });

  it('rejects a NUL character in search filters, latest and login with 400', async () => {
    const flat = await search({ groupId: 'org\u0000odd' });
    expect(flat.status).toBe(400);
    expect(flat.body.errors).toEqual([{ path: 'groupId', message: 'must not contain NUL characters' }]);
    const nested = await search({ artifact: { artifactId: '\u0000' } });
    expect(nested.status).toBe(400);
    expect(nested.body.errors[0].path).toBe('artifact.artifactId');
    const latest = await server.request('GET', '/v1/repositories/latest?groupId=org%00odd&artifactId=lib');
    expect(latest.status).toBe(400);
    expect(latest.body.errors[0].path).toBe('groupId');
    const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'ad\u0000min', password: 'whatever-1' } });
    expect(login.status).toBe(400);
    expect(login.body.errors[0].path).toBe('username');
  });

  it('rejects a NUL character in the project of a new user with 400 and valid: false', async () => {
    const res = await server.request('POST', '/v1/users', {
      token: admin,
      body: { username: 'nul-user', password: 'nul-user-secret', projectName: 'p\u0000', role: 'ROLE_USER' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ valid: false, userId: null, errors: [{ path: 'projectName', message: 'must not contain NUL characters' }] });
  });

  it('stores a 100-character version whose sort key grows when lower-cased', async () => {
    // 'İ' lower-cases to two characters, each a token of its own in the key.
    const version = `1${'İ1'.repeat(49)}İ`;
    expect(version).toHaveLength(100);
    const res = await publish(record({}, { artifactId: 'dotted', version }));
    expect(res.status).toBe(201);
    const found = await search({ artifactId: 'dotted' }, '?sortField=version');
    expect(found.body.versionInformation.map((v: { version: string }) => v.version)).toEqual([version]);
  });

  it.each(['9999-12-31T23:59:59.999-18:00', '9999-12-31T23:00:00-0100', '0100-01-01T00:00:00+1800'])(
    'rejects creationDate %s, outside the years 1000 to 9999 in UTC, with 400',
    async (creationDate) => {
      const res = await publish(record({ creationDate }, { artifactId: 'far' }));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe('creationDate');
    },
  );

  it('stores the first and last instants of four-digit years', async () => {
    for (const [version, creationDate, expected] of [
      ['1', '9999-12-31T23:59:59.999+0000', '9999-12-31T23:59:59.999+0000'],
      ['2', '1000-01-01T00:00:00Z', '1000-01-01T00:00:00.000+0000'],
    ]) {
      expect((await publish(record({ creationDate }, { artifactId: 'edges', version }))).status).toBe(201);
      const found = await search({ artifactId: 'edges', version });
      expect(found.body.versionInformation[0].creationDate).toBe(expected);
    }
  });
});
