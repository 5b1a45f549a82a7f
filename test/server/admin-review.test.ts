// What a security review of the administration endpoints found, tried as an attacker would on every
// database kind: NUL characters, addresses every delivery would refuse, secrets inside webhook URLs
// kept out of the audit log, audit entries that say what changed, and refusals that name what was
// refused.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { eventually } from '../helpers/receiver.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

interface Entry {
  action: string;
  target: string | null;
  outcome: string;
  requestId: string | null;
  details: Record<string, unknown> | null;
}

describe.each(dbKinds())('the administration endpoints under review on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
  }, 180_000);
  afterAll(() => server?.close());

  /** The audit entry of the request answered with `res`, once it is written. */
  async function entryOf(res: { headers: Headers }): Promise<Entry> {
    const requestId = res.headers.get('x-request-id');
    let entry: Entry | undefined;
    await eventually(async () => {
      const page = await server.request('GET', '/v1/audit?size=1000', { token: admin });
      entry = (page.body.entries as Entry[]).find((e) => e.requestId === requestId);
      return entry !== undefined;
    }, 20_000, `the audit entry of request ${requestId}`);
    return entry!;
  }

  const webhook = async (url: string) => {
    const res = await server.request('POST', '/v1/webhooks', { token: admin, body: { url } });
    expect(res.status, res.text).toBe(201);
    return res;
  };

  it('answers a NUL in a webhook URL (create and change) or in the audit actor with 400, as any other field', async () => {
    const created = await server.request('POST', '/v1/webhooks', { token: admin, body: { url: 'https://hooks.example.com/a\u0000b' } });
    expect(created.status).toBe(400);
    expect(created.body.errors).toEqual([{ path: 'url', message: 'must not contain NUL characters' }]);
    const hook = await webhook('https://hooks.example.com/nul');
    const changed = await server.request('PATCH', `/v1/webhooks/${hook.body.id}`, { token: admin, body: { url: 'https://hooks.example.com/\u0000' } });
    expect(changed.status).toBe(400);
    expect(changed.body.errors).toEqual([{ path: 'url', message: 'must not contain NUL characters' }]);
    const audit = await server.request('GET', '/v1/audit?actor=ad%00min', { token: admin });
    expect(audit.status).toBe(400);
    expect(audit.body.errors).toEqual([{ path: 'actor', message: 'must not contain NUL characters' }]);
  });

  it.each([
    ['an IPv4-compatible IPv6 loopback', 'http://[::127.0.0.1]/hook', /127\.0\.0\.1 is a loopback address/],
    ['an IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/hook', /127\.0\.0\.1 is a loopback address/],
    ['a NAT64 metadata address', 'http://[64:ff9b::169.254.169.254]/', /169\.254\.169\.254 is a link-local/],
    ['the metadata address in 100.64.0.0/10', 'http://100.100.100.200/latest/meta-data/', /100\.100\.100\.200 is a cloud metadata address/],
    ['localhost', 'http://localhost:9/hook', /localhost resolves to an address that is a loopback address/],
  ])('refuses %s at creation and on a change, naming the server setting that allows it', async (_name, url, reason) => {
    const created = await server.request('POST', '/v1/webhooks', { token: admin, body: { url } });
    expect(created.status).toBe(400);
    expect(created.body._message.message).toMatch(reason);
    expect(created.body._message.message).toContain('the server setting --repoadmin_webhook_allow_networks (REPO_MAN_WEBHOOK_ALLOW_NETWORKS)');
    const hook = await webhook('https://hooks.example.com/moved');
    const changed = await server.request('PATCH', `/v1/webhooks/${hook.body.id}`, { token: admin, body: { url } });
    expect(changed.status).toBe(400);
    expect(changed.body._message.message).toMatch(reason);
    expect((await server.request('GET', `/v1/webhooks/${hook.body.id}`, { token: admin })).body.url).toBe('https://hooks.example.com/moved');
  });

  it('keeps no secret of a webhook URL in the audit log: scheme, host and the shape of the path only', async () => {
    const secrets = ['T0SECRET1', 'B0SECRET2', 'XXXXslackSECRET3XXXX', 'query-SECRET4', 'fragment-SECRET5', 'patched-SECRET6'];
    const hook = await webhook(`https://hooks.slack.com/services/${secrets[0]}/${secrets[1]}/${secrets[2]}?token=${secrets[3]}#${secrets[4]}`);
    expect((await entryOf(hook)).details).toEqual({ url: 'https://hooks.slack.com/*/*/*/*?*#*' });
    const patched = await server.request('PATCH', `/v1/webhooks/${hook.body.id}`, { token: admin, body: { url: `https://ci.example.com:8443/hooks/${secrets[5]}` } });
    expect(patched.status).toBe(200);
    expect((await entryOf(patched)).details).toEqual({ changed: { url: 'https://ci.example.com:8443/*/*' } });
    const removed = await server.request('DELETE', `/v1/webhooks/${hook.body.id}`, { token: admin });
    expect(removed.status).toBe(204);
    expect((await entryOf(removed)).details).toEqual({ url: 'https://ci.example.com:8443/*/*' });
    const stored = JSON.stringify(await server.db('audit').select('*'));
    for (const secret of secrets) expect(stored, 'a secret of a webhook URL in the audit table').not.toContain(secret);
  });

  it('records what changed: a rotation, a change, a deletion of a webhook', async () => {
    const hook = await webhook('https://hooks.example.com/changes');
    const rotated = await server.request('POST', `/v1/webhooks/${hook.body.id}/rotate-secret`, { token: admin });
    expect(rotated.status).toBe(200);
    expect(await entryOf(rotated)).toMatchObject({
      action: 'webhook.changed',
      target: hook.body.id,
      details: { rotated: 'secret', previousValidUntil: rotated.body.previousValidUntil },
    });
    const changed = await server.request('PATCH', `/v1/webhooks/${hook.body.id}`, {
      token: admin,
      body: { events: ['latest.moved'], projects: ['p1'], description: 'the CI', active: false },
    });
    expect(changed.status).toBe(200);
    expect(await entryOf(changed)).toMatchObject({
      action: 'webhook.changed',
      target: hook.body.id,
      details: { changed: { events: ['latest.moved'], projects: ['p1'], description: 'the CI', active: false } },
    });
    const removed = await server.request('DELETE', `/v1/webhooks/${hook.body.id}`, { token: admin });
    expect(await entryOf(removed)).toMatchObject({ action: 'webhook.deleted', target: hook.body.id, details: { url: 'https://hooks.example.com/*' } });
  });

  it('names a project token in token.created as token.revoked does', async () => {
    const created = await server.request('POST', '/v1/tokens', { token: admin, body: { name: 'audit-named', scope: 'read' } });
    expect(created.status).toBe(201);
    expect(await entryOf(created)).toMatchObject({
      action: 'token.created',
      details: { tokenId: created.body.id, name: 'audit-named', scope: 'read', freshLogin: 'session' },
    });
    const revoked = await server.request('DELETE', `/v1/tokens/${created.body.id}`, { token: admin });
    expect(await entryOf(revoked)).toMatchObject({ action: 'token.revoked', target: created.body.id });
    expect(JSON.stringify(await server.db('audit').select('*'))).not.toContain(created.body.token);
  });

  it('names a retention policy the same way in each of its entries, and records its deletion as such', async () => {
    const rules = { projects: ['p1'], keepLast: 3 };
    const created = await server.request('POST', '/v1/retention/policies', { token: admin, body: { name: 'audited', ...rules } });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id;
    expect(await entryOf(created)).toMatchObject({ action: 'retention.policy_changed', target: id, details: { name: 'audited', created: true } });
    const renamed = await server.request('PATCH', `/v1/retention/policies/${id}`, { token: admin, body: { name: 'audited-2', keepLast: 5 } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(await entryOf(renamed)).toMatchObject({ action: 'retention.policy_changed', target: id, details: { name: 'audited-2', changed: { name: 'audited-2', keepLast: 5 } } });
    const removed = await server.request('DELETE', `/v1/retention/policies/${id}`, { token: admin });
    expect(removed.status).toBe(204);
    expect(await entryOf(removed)).toMatchObject({ action: 'retention.policy_deleted', target: id, details: { name: 'audited-2' } });
    const listed = await server.request('GET', '/v1/audit?action=retention.policy_deleted', { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.entries.map((e: Entry) => e.target)).toContain(id);
  });

  it('tells a project token what was refused: the audit log, webhooks, retention policies, the trash', async () => {
    const token = async (scope: string) => {
      const res = await server.request('POST', '/v1/tokens', { token: admin, body: { name: `refused-${scope}`, scope } });
      expect(res.status, res.text).toBe(201);
      return res.body.token as string;
    };
    const [read, publish] = [await token('read'), await token('publish')];
    const refusal = async (method: string, path: string, projectToken: string) => {
      const res = await server.request(method, path, { token: projectToken, body: method === 'GET' || method === 'DELETE' ? undefined : {} });
      expect(res.status).toBe(403);
      return res.body._message.message as string;
    };
    const some = randomUUID();
    expect(await refusal('GET', '/v1/audit', publish)).toBe('a project token cannot read the audit log: log in with a user name and password for that');
    expect(await refusal('GET', '/v1/webhooks', publish)).toMatch(/^a project token cannot manage webhooks:/);
    expect(await refusal('POST', '/v1/webhooks', publish)).toMatch(/^a project token cannot manage webhooks:/);
    expect(await refusal('GET', '/v1/retention/policies', publish)).toMatch(/^a project token cannot manage retention policies:/);
    expect(await refusal('DELETE', `/v1/retention/policies/${some}`, publish)).toMatch(/^a project token cannot manage retention policies:/);
    expect(await refusal('GET', '/v1/users', publish)).toMatch(/^a project token cannot manage users, passwords or tokens:/);
    expect(await refusal('POST', `/v1/trash/${some}/restore`, read)).toBe(
      'the project token "refused-read" has the scope read: restoring from the trash needs a token with the scope delete',
    );
    expect(await refusal('GET', '/v1/trash', publish)).toBe(
      'the project token "refused-publish" has the scope publish: reading the trash needs a token with the scope delete',
    );
    expect(await refusal('DELETE', `/v1/repositories/${some}`, read)).toBe(
      'the project token "refused-read" has the scope read: deleting a record needs a token with the scope delete',
    );
  });
});
