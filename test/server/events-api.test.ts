// The events, webhooks and audit endpoints through HTTP: access, the long poll, secrets shown once,
// the address rule at creation, and the audit entries of requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { ADMIN_PASSWORD, type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('events, webhooks and audit endpoints on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let user: string;
  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
    await server.request('POST', '/v1/users', { token: admin, body: { username: 'dev', password: 'dev-secret-1', projectName: 'p1', role: 'ROLE_USER' } });
    user = (await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'dev', password: 'dev-secret-1' } })).body.token;
  }, 180_000);
  afterAll(() => server?.close());

  it('webhooks: the secret once at creation, never after; a literal loopback address refused; non-admins 403', async () => {
    const created = await server.request('POST', '/v1/webhooks', { token: admin, body: { url: 'https://hooks.example.com/x', projects: ['p1'] } });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    const listed = await server.request('GET', '/v1/webhooks', { token: admin });
    expect(listed.text).not.toContain(created.body.secret);
    expect(listed.body.webhooks[0]).toMatchObject({ id: created.body.id, events: expect.arrayContaining(['version.published', 'latest.moved']) });
    const loopback = await server.request('POST', '/v1/webhooks', { token: admin, body: { url: 'http://127.0.0.1:9/' } });
    expect(loopback.status).toBe(400);
    expect(loopback.text).toMatch(/loopback/);
    expect((await server.request('POST', '/v1/webhooks', { token: user, body: { url: 'https://x.example.com/' } })).status).toBe(403);
    expect((await server.request('GET', '/v1/audit', { token: user })).status).toBe(403);
    const rotated = await server.request('POST', `/v1/webhooks/${created.body.id}/rotate-secret`, { token: admin });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect((await server.request('DELETE', `/v1/webhooks/${created.body.id}`, { token: admin })).status).toBe(204);
    const audit = await server.request('GET', '/v1/audit', { token: admin });
    expect(audit.text).not.toContain(created.body.secret);
    expect(audit.text).not.toContain(rotated.body.secret);
    expect(audit.text).not.toContain(ADMIN_PASSWORD);
  });

  it('the feed: a long poll answers when a publish commits; a ROLE_USER session is refused', async () => {
    const start = await server.request('GET', '/v1/events?limit=1000', { token: admin });
    expect(start.status).toBe(200);
    const waiting = server.request('GET', `/v1/events?after=${start.body.next}&wait=20&type=latest.moved`, { token: admin });
    await new Promise((r) => setTimeout(r, 300));
    await server.request('POST', '/v1/repositories', {
      token: admin,
      body: { projectName: 'p1', branch: 'main', artifact: { groupId: 'g', artifactId: 'feed', version: '1.0.0' }, latestVersion: true },
    });
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.events).toEqual([expect.objectContaining({ type: 'latest.moved', data: expect.objectContaining({ to: '1.0.0', from: null, seq: 1 }) })]);
    expect((await server.request('GET', '/v1/events', { token: user })).status).toBe(403);
    expect((await server.request('GET', '/v1/events?limit=0', { token: admin })).status).toBe(400);
  });

  it('audit: requests recorded with actor, outcome and request id, refused ones too', async () => {
    await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'dev', password: 'wrong-password' } });
    const audit = await server.request('GET', '/v1/audit?size=100', { token: admin });
    expect(audit.status).toBe(200);
    const entries = audit.body.entries as { action: string; outcome: string; actor: { username: string | null }; requestId: string | null }[];
    expect(entries.find((e) => e.action === 'login' && e.outcome !== 'ok')).toBeDefined();
    expect(entries.find((e) => e.action === 'webhook.created' && e.outcome === 'ok' && e.actor.username === 'admin')?.requestId).toBeTruthy();
    expect(entries.find((e) => e.action === 'webhook.created' && e.outcome === 'denied')).toBeDefined();
    const stored = JSON.stringify(await server.db('audit').select('*'));
    for (const secret of [ADMIN_PASSWORD, 'wrong-password', 'dev-secret-1', admin, user]) expect(stored).not.toContain(secret);
  });
});
