// The delete, trash and retention endpoints over HTTP: permissions per role and token scope, the
// answers' shapes, and their place in the API description.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('delete, trash and retention endpoints on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  const tokens: Record<string, string> = {};

  const login = async (username: string) =>
    (await server.request('POST', '/v1/authentication/generate-token', { body: { username, password: `${username}-secret` } })).body.token as string;
  const publish = async (projectName: string, version: string, latestVersion = false) => {
    const answer = await server.request('POST', '/v1/repositories', {
      token: admin,
      body: { projectName, branch: 'feature/x', artifact: { groupId: 'g', artifactId: 'a', version }, latestVersion },
    });
    expect(answer.status).toBe(201);
    return answer.body.uid as string;
  };

  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
    for (const [name, project] of [['shop', 'shop'], ['other', 'other']]) {
      expect((await server.request('POST', '/v1/users', { token: admin, body: { username: name, password: `${name}-secret`, projectName: project, role: 'ROLE_USER' } })).status).toBe(201);
    }
    tokens.shop = await login('shop');
    tokens.other = await login('other');
    for (const scope of ['read', 'publish', 'delete']) {
      const made = await server.request('POST', '/v1/tokens', { token: tokens.shop, body: { name: `ci-${scope}`, scope } });
      expect(made.status, made.text).toBe(201);
      tokens[`shop-${scope}`] = made.body.token;
    }
  });
  afterAll(() => server?.close());

  it('who may delete: administrators, the project own user, its project tokens of the scope delete only', async () => {
    const cases: [string, number][] = [
      ['shop-read', 403],
      ['shop-publish', 403],
      ['other', 403],
      ['shop-delete', 204],
      ['shop', 204],
    ];
    for (const [who, status] of cases) {
      const uid = await publish('shop', `1.0.${who.length}-${who}`);
      const answer = await server.request('DELETE', `/v1/repositories/${uid}`, { token: tokens[who] });
      expect(answer.status, `${who}: ${answer.text}`).toBe(status);
    }
    const uid = await publish('other', '9.9.9');
    expect((await server.request('DELETE', `/v1/repositories/${uid}`, { token: admin })).status).toBe(204);
    expect((await server.request('DELETE', `/v1/repositories/${uid}`, { token: admin })).status).toBe(404);
    expect((await server.request('DELETE', `/v1/repositories/${uid}`)).status).toBe(401);
  });

  it('a token of the scope delete may also publish', async () => {
    const answer = await server.request('POST', '/v1/repositories', {
      token: tokens['shop-delete'],
      body: { projectName: 'shop', branch: 'main', artifact: { groupId: 'g', artifactId: 'by-delete', version: '1.0.0' } },
    });
    expect(answer.status, answer.text).toBe(201);
  });

  it("a key's latest needs force=true; then the highest remaining version is the latest", async () => {
    await publish('shop', '2.10.0');
    const top = await publish('shop', '2.9.0', true);
    const refused = await server.request('DELETE', `/v1/repositories/${top}`, { token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body._message.code).toBe('conflict');
    // The reason lets a client say its own way of forcing it (the command line's --force).
    expect(refused.body.reason).toBe('latest_record');
    expect(refused.body._message.message).toMatch(/force=true/);
    expect((await server.request('DELETE', `/v1/repositories/${top}?force=maybe`, { token: admin })).status).toBe(400);
    expect((await server.request('DELETE', `/v1/repositories/${top}?force=true`, { token: admin })).status).toBe(204);
    const latest = await server.request('GET', '/v1/repositories/latest?groupId=g&artifactId=a&branch=feature/x&projectName=shop');
    expect(latest.body.version).toBe('2.10.0');
  });

  it('the trash: a page per project, restore, and 409 once the coordinates were published again', async () => {
    const page = await server.request('GET', '/v1/trash?size=50', { token: admin });
    expect(page.status).toBe(200);
    expect(page.body.page.totalElements).toBeGreaterThanOrEqual(4);
    expect(page.body.records[0]).toMatchObject({ deletedBy: 'admin', purgeAfter: expect.any(String), deletedAt: expect.any(String) });
    const own = await server.request('GET', '/v1/trash', { token: tokens.shop });
    expect(own.body.records.every((r: { projectName: string }) => r.projectName === 'shop')).toBe(true);
    expect((await server.request('GET', '/v1/trash?projectName=other', { token: tokens.shop })).status).toBe(403);
    expect((await server.request('GET', '/v1/trash', { token: tokens['shop-read'] })).status).toBe(403);

    const uid = await publish('shop', '3.0.0');
    await server.request('DELETE', `/v1/repositories/${uid}`, { token: admin });
    expect((await server.request('POST', `/v1/trash/${uid}/restore`, { token: tokens.other })).status).toBe(403);
    const restored = await server.request('POST', `/v1/trash/${uid}/restore`, { token: tokens['shop-delete'] });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ uid, version: '3.0.0' });
    await server.request('DELETE', `/v1/repositories/${uid}`, { token: admin });
    await publish('shop', '3.0.0');
    expect((await server.request('POST', `/v1/trash/${uid}/restore`, { token: admin })).status).toBe(409);
  });

  it('retention policies: administrators only, a dry run before enabling, a run into the trash', async () => {
    const body = { name: 'features', branches: ['feature/*'], keepLast: 1 };
    expect((await server.request('POST', '/v1/retention/policies', { token: tokens.shop, body })).status).toBe(403);
    expect((await server.request('POST', '/v1/retention/policies', { token: admin, body: { ...body, keepLast: 0 } })).status).toBe(400);
    const created = await server.request('POST', '/v1/retention/policies', { token: admin, body });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ protectedBranches: ['main', 'master', 'release/*'], projects: ['*'], enabled: false, dryRunDone: false });
    const id = created.body.id;
    expect((await server.request('PATCH', `/v1/retention/policies/${id}`, { token: admin, body: { enabled: true } })).status).toBe(409);
    expect((await server.request('POST', `/v1/retention/policies/${id}/run?dryRun=false`, { token: admin })).status).toBe(409);
    const dry = await server.request('POST', `/v1/retention/policies/${id}/run`, { token: admin });
    expect(dry.body).toMatchObject({ dryRun: true, wouldDelete: expect.any(Number), kept: expect.any(Number) });
    expect(dry.body.wouldDelete).toBeGreaterThan(0);
    expect((await server.request('PATCH', `/v1/retention/policies/${id}`, { token: admin, body: { enabled: true } })).body.enabled).toBe(true);
    const run = await server.request('POST', `/v1/retention/policies/${id}/run?dryRun=false`, { token: admin });
    expect(run.body).toMatchObject({ dryRun: false, deleted: dry.body.wouldDelete });
    expect((await server.request('GET', '/v1/retention/policies', { token: admin })).body.policies.map((p: { name: string }) => p.name)).toEqual(['features']);
    expect((await server.request('DELETE', `/v1/retention/policies/${id}`, { token: admin })).status).toBe(204);
    expect((await server.request('GET', `/v1/retention/policies/${id}`, { token: admin })).status).toBe(404);
  });

  it('the API description lists the endpoints', async () => {
    const paths = (await server.request('GET', '/v1/openapi.json')).body.paths;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining(['/v1/repositories/{uid}', '/v1/trash', '/v1/trash/{uid}/restore', '/v1/retention/policies', '/v1/retention/policies/{id}', '/v1/retention/policies/{id}/run']),
    );
    expect(paths['/v1/repositories/{uid}'].delete).toBeDefined();
  });
});
