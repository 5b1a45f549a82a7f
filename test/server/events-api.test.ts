// The events, webhooks and audit endpoints through HTTP: access, the long poll, secrets shown once,
// the address rule at creation, and the audit entries of requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { eventually } from '../helpers/receiver.js';
import { ADMIN_PASSWORD, DEFAULT_ADMIN_ID, type TestServer, startTestServer } from '../helpers/server.js';

/**
 * Settles once the server's feed has read the events `times` more times (its read, seen as the
 * statement is sent; nothing else reads the events by `seq` in order): a long poll is then waiting.
 */
function feedLooks(server: TestServer, times: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const count = (query: { sql: string }) => {
      if (!/from [`"]events[`"] where [`"]seq[`"] > (\?|\$\d+)/.test(query.sql) || ++seen < times) return;
      server.db.off('query', count);
      resolve();
    };
    server.db.on('query', count);
  });
}

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
    const looked = feedLooks(server, 1);
    const waiting = server.request('GET', `/v1/events?after=${start.body.next}&wait=20&type=latest.moved`, { token: admin });
    // The feed has looked and found nothing: it is waiting when the publish commits.
    await looked;
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

  it('the feed: a long poll ends as soon as its client goes away', async () => {
    const start = await server.request('GET', '/v1/events?limit=1000', { token: admin });
    const requestId = `feed-gone-${kind}`;
    const gone = new AbortController();
    const looked = feedLooks(server, 1);
    const waiting = fetch(`${server.url}/v1/events?after=${start.body.next}&wait=30&type=latest.moved`, {
      headers: { Authorization: `Bearer ${admin}`, 'X-Request-Id': requestId },
      signal: gone.signal,
    }).catch(() => 'aborted');
    await looked;
    gone.abort();
    expect(await waiting).toBe('aborted');
    // The access line is written when the handler returns: long before the 30 s wait, since the
    // feed stops looking once the connection has closed.
    const started = Date.now();
    await eventually(async () => server.logs.some((line) => line.includes(`"requestId":"${requestId}"`) && line.includes('"msg":"request"')), 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('audit: entries of many requests at once are each written once (written together while an insert is under way)', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `audit-burst-${kind}-${i}`);
    const answers = await Promise.all(
      ids.map((id, i) =>
        server.request('POST', '/v1/repositories', {
          token: admin,
          headers: { 'X-Request-Id': id },
          body: { projectName: 'p1', branch: 'main', artifact: { groupId: 'g', artifactId: 'burst', version: `1.0.${i}` } },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 201));
    const written = async () => (await server.db('audit').whereIn('request_id', ids).select('request_id', 'action', 'outcome', 'username')) as Record<string, unknown>[];
    await eventually(async () => (await written()).length >= ids.length);
    const rows = await written();
    expect(rows.map((r) => r.request_id).sort()).toEqual([...ids].sort());
    expect(rows.every((r) => r.action === 'version.published' && r.outcome === 'ok' && r.username === 'admin')).toBe(true);
  });

  it('audit: requests recorded with actor, outcome and request id, refused ones too', async () => {
    const refused = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'dev', password: 'wrong-password' } });
    // Entries are written after the answer goes out.
    await eventually(async () => (await server.db('audit').where({ request_id: refused.headers.get('x-request-id') })).length === 1);
    const audit = await server.request('GET', '/v1/audit?size=100', { token: admin });
    expect(audit.status).toBe(200);
    const entries = audit.body.entries as { action: string; outcome: string; actor: { username: string | null }; requestId: string | null }[];
    expect(entries.find((e) => e.action === 'login' && e.outcome !== 'ok')).toBeDefined();
    expect(entries.find((e) => e.action === 'webhook.created' && e.outcome === 'ok' && e.actor.username === 'admin')?.requestId).toBeTruthy();
    expect(entries.find((e) => e.action === 'webhook.created' && e.outcome === 'denied')).toBeDefined();
    const stored = JSON.stringify(await server.db('audit').select('*'));
    for (const secret of [ADMIN_PASSWORD, 'wrong-password', 'dev-secret-1', admin, user]) expect(stored).not.toContain(secret);
  });

  it('audit: a login names the user it proved; a request the role or scope check refused names who tried, how and what at', async () => {
    const made = await server.request('POST', '/v1/users', { token: admin, body: { username: 'auditee', password: 'auditee-pw-1', projectName: 'p7', role: 'ROLE_USER' } });
    expect(made.status).toBe(201);
    const id = (name: string) => ({ 'X-Request-Id': `${name}-${kind}` });
    const session = await server.request('POST', '/v1/authentication/generate-token', { headers: id('audit-login'), body: { username: 'auditee', password: 'auditee-pw-1' } });
    expect(session.status).toBe(200);
    const token = session.body.token as string;
    // The role check refuses: an administrator's actions, by a ROLE_USER session.
    const create = await server.request('POST', '/v1/users', { token, headers: id('audit-role'), body: { username: 'sneaky', password: 'sneaky-pw-1', projectName: 'p7', role: 'ROLE_ADMIN' } });
    expect(create.status).toBe(403);
    const remove = await server.request('DELETE', `/v1/users/${DEFAULT_ADMIN_ID}`, { token, headers: id('audit-role-param') });
    expect(remove.status).toBe(403);
    // The scope check refuses: a project token may not manage users.
    const projectToken = await server.request('POST', '/v1/tokens', { token, body: { name: 'audit-pipeline', scope: 'read' } });
    expect(projectToken.status).toBe(201);
    const scoped = await server.request('PUT', `/v1/users/${made.body.userId}/password`, { token: projectToken.body.token, headers: id('audit-scope'), body: { password: 'auditee-pw-2' } });
    expect(scoped.status).toBe(403);

    const ids = ['audit-login', 'audit-role', 'audit-role-param', 'audit-scope'].map((name) => id(name)['X-Request-Id']);
    await eventually(async () => (await server.db('audit').whereIn('request_id', ids)).length === ids.length);
    const listed = await server.request('GET', '/v1/audit?actor=auditee&size=100', { token: admin });
    expect(listed.status).toBe(200);
    const entries = (listed.body.entries as { requestId: string }[]).filter((e) => ids.includes(e.requestId));
    const entry = (name: string) => entries.find((e) => e.requestId === id(name)['X-Request-Id']);
    const auditee = { userId: made.body.userId, username: 'auditee' };
    expect(entry('audit-login')).toMatchObject({ action: 'login', outcome: 'ok', via: 'password', target: 'auditee', actor: { ...auditee, tokenId: null } });
    expect(entry('audit-role')).toMatchObject({ action: 'user.created', outcome: 'denied', via: 'session', target: 'sneaky', actor: { ...auditee, tokenId: null } });
    expect(entry('audit-role-param')).toMatchObject({ action: 'user.deleted', outcome: 'denied', via: 'session', target: DEFAULT_ADMIN_ID, actor: auditee });
    expect(entry('audit-scope')).toMatchObject({
      action: 'user.password_changed',
      outcome: 'denied',
      via: 'token',
      target: made.body.userId,
      actor: { ...auditee, tokenId: projectToken.body.id },
    });
  });

  it('audit: no stored row holds a password, token or webhook secret of the actions that handle one', async () => {
    const secrets: string[] = [admin, user, ADMIN_PASSWORD, 'dev-secret-1'];
    const made = await server.request('POST', '/v1/users', { token: admin, body: { username: 'keeper', password: 'keeper-first-pw-1', projectName: 'p9', role: 'ROLE_USER' } });
    expect(made.status).toBe(201);
    secrets.push('keeper-first-pw-1');
    const changed = await server.request('PUT', `/v1/users/${made.body.userId}/password`, { token: admin, body: { password: 'keeper-second-pw-2' } });
    expect(changed.status).toBe(200);
    secrets.push('keeper-second-pw-2');
    expect((await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'keeper', password: 'keeper-wrong-pw-3' } })).status).toBe(401);
    secrets.push('keeper-wrong-pw-3');
    const session = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'keeper', password: 'keeper-second-pw-2' } });
    expect(session.status).toBe(200);
    secrets.push(session.body.token);
    const projectToken = await server.request('POST', '/v1/tokens', { token: session.body.token, body: { name: 'pipeline', scope: 'publish' } });
    expect(projectToken.status).toBe(201);
    secrets.push(projectToken.body.token);
    const published = await server.request('POST', '/v1/repositories', {
      token: projectToken.body.token,
      body: { projectName: 'p9', branch: 'main', artifact: { groupId: 'g', artifactId: 'kept', version: '1.0.0' } },
    });
    expect(published.status).toBe(201);
    // Its entry names the token, read by its hash after the answer: revoked only once that is done.
    await eventually(async () => (await server.db('audit').where({ action: 'version.published', request_id: published.headers.get('x-request-id') })).length === 1);
    expect((await server.request('DELETE', `/v1/tokens/${projectToken.body.id}`, { token: session.body.token })).status).toBe(204);
    const hook = await server.request('POST', '/v1/webhooks', { token: admin, body: { url: 'https://hooks.example.com/audit', projects: ['p9'] } });
    expect(hook.status).toBe(201);
    secrets.push(hook.body.secret);
    const rotated = await server.request('POST', `/v1/webhooks/${hook.body.id}/rotate-secret`, { token: admin });
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.secret);

    // Entries are written after the answer: wait for every one, so that the search below reads them all.
    const expected: [string, string, string][] = [
      ['user.created', 'keeper', 'ok'],
      ['user.password_changed', made.body.userId, 'ok'],
      ['login', 'keeper', 'denied'],
      ['login', 'keeper', 'ok'],
      ['token.created', made.body.userId, 'ok'],
      ['version.published', 'p9', 'ok'],
      ['token.revoked', projectToken.body.id, 'ok'],
      ['webhook.created', hook.body.id, 'ok'],
      ['webhook.changed', hook.body.id, 'ok'],
    ];
    type Row = { action: string; target: string | null; outcome: string; via: string | null; token_id: string | null; address: string | null; request_id: string | null };
    const found = (rows: Row[], [action, target, outcome]: [string, string, string]) =>
      rows.find((r) => r.action === action && r.outcome === outcome && String(r.target).includes(target));
    let rows: Row[] = [];
    await eventually(async () => {
      rows = await server.db('audit').select('*');
      return expected.every((e) => found(rows, e));
    }, 20_000, 'the audit entries of every action');
    for (const e of expected) expect(found(rows, e)).toMatchObject({ address: expect.any(String), request_id: expect.any(String) });
    expect(found(rows, ['version.published', 'p9', 'ok'])).toMatchObject({ via: 'token', token_id: projectToken.body.id });
    expect(found(rows, ['login', 'keeper', 'ok'])).toMatchObject({ via: 'password' });

    const stored = JSON.stringify(rows);
    for (const secret of secrets) expect(stored, 'a secret in the audit table').not.toContain(secret);
  });
});
