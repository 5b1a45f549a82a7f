// Events written with the change, on every database kind and publish path, and delivered to a
// webhook: 400 publishes from 8 concurrent clients across 5 keys (issue 24's acceptance).
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../server/services/context.js';
import { type ApiEvent, feed } from '../../server/services/events.js';
import { createWebhook } from '../../server/services/webhooks.js';
import { dbKinds } from '../helpers/db.js';
import { type Receiver, eventually, startReceiver } from '../helpers/receiver.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const KEYS = 5;
const CLIENTS = 8;
const PUBLISHES = 400;

async function allEvents(server: TestServer): Promise<ApiEvent[]> {
  const events: ApiEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await feed({ db: server.db }, { after, limit: 1000, wait: 0 });
    if (page.events.length === 0) return events;
    events.push(...page.events);
    after = page.next;
  }
}

describe.each(dbKinds())('events on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let receiver: Receiver;
  let secret: string;
  beforeAll(async () => {
    server = await startTestServer({ kind, config: { webhooks: { ...(await import('../../server/config.js')).loadConfig([], {}).webhooks, allowNetworks: ['127.0.0.0/8'] } } });
    admin = await server.adminToken();
    receiver = await startReceiver();
    const services = { db: server.db, config: server.config, now: () => new Date() } as Services;
    secret = (await createWebhook(services, { url: receiver.url, events: ['version.published', 'latest.moved'] })).secret;
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('400 publishes from 8 clients: one version.published each, latest.moved gapless per key, every delivery verifies', async () => {
    const acknowledged: string[] = [];
    let next = 0;
    const client = async () => {
      while (next < PUBLISHES) {
        const i = next++;
        const key = i % KEYS;
        const version = `1.0.${i}`;
        // Every third publish is not a latest one; some republish the key's latest as not latest.
        const res = await server.request('POST', '/v1/repositories', {
          token: admin,
          body: { projectName: 'ev', branch: 'main', artifact: { groupId: 'ev', artifactId: `lib${key}`, version }, latestVersion: i % 3 !== 0 },
        });
        expect([200, 201]).toContain(res.status);
        acknowledged.push(res.body.uid as string);
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));

    const events = await allEvents(server);
    const published = events.filter((e) => e.type === 'version.published');
    expect(published.map((e) => e.data.uid).sort()).toEqual([...acknowledged].sort());
    expect(published.every((e) => e.data.created === true)).toBe(true);

    const moved = events.filter((e) => e.type === 'latest.moved');
    for (let key = 0; key < KEYS; key++) {
      const chain = moved.filter((e) => e.data.artifactId === `lib${key}`);
      expect(chain.map((e) => e.data.seq)).toEqual(chain.map((_, i) => i + 1));
      for (let i = 1; i < chain.length; i++) expect(chain[i]!.data.from).toBe(chain[i - 1]!.data.to);
      const [latest] = await server.db('versions').where({ artifact_id: `lib${key}`, latest_version: true });
      expect(chain.at(-1)!.data.to).toBe(latest.version);
    }
    // Commit order: a key's moves appear in the feed in their seq order.
    expect(events.map((e) => Number(e.id))).toHaveLength(new Set(events.map((e) => e.id)).size);

    await eventually(() => new Set(receiver.received.map((r) => r.id)).size === events.length, 180_000, 'every event delivered');
    const verifier = new StandardWebhook(secret);
    for (const r of receiver.received) {
      expect(() => verifier.verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature })).not.toThrow();
    }
  }, 300_000);

  it('a republish is version.published with created false; dropping the latest flag moves latest to null', async () => {
    const record = { projectName: 'ev', branch: 'rel', artifact: { groupId: 'ev', artifactId: 'solo', version: '1.0.0' } };
    const before = (await allEvents(server)).length;
    await server.request('POST', '/v1/repositories', { token: admin, body: { ...record, latestVersion: true } });
    await server.request('POST', '/v1/repositories', { token: admin, body: { ...record, latestVersion: false } });
    const events = (await allEvents(server)).slice(before).map((e) => [e.type, e.data.created ?? null, e.data.from ?? null, e.data.to ?? null]);
    expect(events).toEqual([
      ['version.published', true, null, null],
      ['latest.moved', null, null, '1.0.0'],
      ['version.published', false, null, null],
      ['latest.moved', null, '1.0.0', null],
    ]);
  });

  it('a rolled-back change leaves no event', async () => {
    const before = await server.db('events').count({ n: '*' });
    await server.db
      .transaction(async (trx) => {
        await trx('versions').insert({
          uid: '00000000-0000-4000-8000-000000000001', project_name: 'ev', branch: 'x', group_id: 'ev', artifact_id: 'gone', version: '1',
          version_key: '1', creation_date: new Date(), type: 'LIB', latest_version: true, updated_at: new Date(),
        });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await server.db('events').count({ n: '*' })).toEqual(before);
  });
});
