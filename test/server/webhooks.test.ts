// The webhook outbox against a real receiver on every database kind: retries, Retry-After, 410,
// auto-disable, redelivery, rotation, several senders on one database, and an audit log without secrets.
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { writeAudit } from '../../server/db/audit.js';
import type { Services } from '../../server/services/context.js';
import { startOutbox } from '../../server/services/outbox.js';
import { createWebhook, deliveries, redeliver, rotateSecret, webhook } from '../../server/services/webhooks.js';
import { dbKinds } from '../helpers/db.js';
import { type Receiver, type Received, eventually, startReceiver } from '../helpers/receiver.js';
import { ADMIN_PASSWORD, type TestServer, startTestServer } from '../helpers/server.js';

const verifies = (secret: string, r: Received) => {
  try {
    new StandardWebhook(secret).verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature });
    return true;
  } catch {
    return false;
  }
};

describe.each(dbKinds())('webhooks on %s', (kind) => {
  let server: TestServer;
  let services: Services;
  let admin: string;
  const receivers: Receiver[] = [];
  const secretsUsed: string[] = [];
  let project = 0;

  beforeAll(async () => {
    const webhooks = { ...loadConfig([], {}).webhooks, retrySchedule: [100, 100, 100], allowNetworks: ['127.0.0.0/8'] };
    server = await startTestServer({ kind, config: { webhooks } });
    admin = await server.adminToken();
    secretsUsed.push(admin, ADMIN_PASSWORD);
    services = { db: server.db, config: server.config, now: () => new Date(), log: { warn() {}, error() {} } } as unknown as Services;
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  /** A receiver and a webhook of its own project, so other tests' events do not reach it. */
  async function hook(answer?: Parameters<typeof startReceiver>[0]) {
    const receiver = await startReceiver(answer);
    receivers.push(receiver);
    const projectName = `wh${++project}`;
    const created = await createWebhook(services, { url: receiver.url, events: ['version.published'], projects: [projectName] });
    secretsUsed.push(created.secret);
    const publish = async (version: string) => {
      const res = await server.request('POST', '/v1/repositories', {
        token: admin,
        body: { projectName, branch: 'main', artifact: { groupId: 'g', artifactId: 'a', version } },
      });
      expect(res.status).toBe(201);
    };
    return { receiver, id: created.id, secret: created.secret, publish };
  }

  it('a receiver that fails twice then succeeds: one webhook-id, 3 attempts, delivered', async () => {
    const { receiver, id, secret, publish } = await hook((_r, sameId) => ({ status: sameId <= 2 ? 500 : 204 }));
    await publish('1.0.0');
    await eventually(async () => (await deliveries(services, id, { page: 1, size: 10 })).deliveries[0]?.status === 'delivered', 30_000);
    const [delivery] = (await deliveries(services, id, { page: 1, size: 10 })).deliveries;
    expect(delivery).toMatchObject({ attempts: 3, status: 'delivered', lastStatus: 204 });
    expect(receiver.received.map((r) => r.id)).toEqual([delivery!.id, delivery!.id, delivery!.id]);
    expect(receiver.received.every((r) => verifies(secret, r))).toBe(true);
    expect((await webhook(services, id)).failuresInRow).toBe(0);
  });

  it('a receiver down for a while (503 with Retry-After) gets everything once it is back', async () => {
    const downUntil = Date.now() + 1_500;
    const { receiver, id, publish } = await hook(() => (Date.now() < downUntil ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }));
    for (let i = 0; i < 10; i++) await publish(`2.0.${i}`);
    await eventually(async () => (await deliveries(services, id, { status: 'delivered', page: 1, size: 100 })).page.totalElements === 10, 25_000);
    const delivered = new Set(receiver.received.filter((r) => r.startedAt >= downUntil).map((r) => r.id));
    expect(delivered.size).toBe(10);
    // Retry-After (1 s) was honoured over the 100 ms schedule: no delivery was tried twice within 900 ms.
    for (const deliveryId of delivered) {
      const times = receiver.received.filter((r) => r.id === deliveryId).map((r) => r.startedAt);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(900);
    }
  });

  it('410 disables the webhook, logged in the audit', async () => {
    const { id, publish } = await hook(() => ({ status: 410 }));
    await publish('3.0.0');
    await eventually(async () => !(await webhook(services, id)).active, 30_000);
    expect((await webhook(services, id)).disabledReason).toMatch(/410/);
    // The audit entry is written right after the webhook is disabled.
    const audited = () => server.db('audit').where({ action: 'webhook.disabled', target: id });
    await eventually(async () => (await audited()).length > 0, 30_000);
    expect(await audited()).toHaveLength(1);
    const [delivery] = (await deliveries(services, id, { page: 1, size: 10 })).deliveries;
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 410 });
  });

  it('20 failures in a row with no success for 5 days disable the webhook', async () => {
    const { id, publish } = await hook(() => ({ status: 500 }));
    const sixDaysAgo = new Date(Date.now() - 6 * 86_400_000);
    await server.db('webhooks').where({ id }).update({ failures_in_row: 19, created_at: sixDaysAgo });
    await publish('4.0.0');
    await eventually(async () => !(await webhook(services, id)).active, 30_000);
    expect((await webhook(services, id)).disabledReason).toMatch(/20 failed deliveries in a row/);
    const audited = () => server.db('audit').where({ action: 'webhook.disabled', target: id });
    await eventually(async () => (await audited()).length > 0, 30_000);
    expect(await audited()).toHaveLength(1);
  });

  it('redeliver sends the same webhook-id again', async () => {
    const { receiver, id, publish } = await hook();
    await publish('5.0.0');
    await eventually(() => receiver.received.length === 1, 30_000);
    const [delivery] = (await deliveries(services, id, { page: 1, size: 10 })).deliveries;
    await redeliver(services, id, delivery!.id);
    await eventually(() => receiver.received.length === 2, 30_000);
    expect(receiver.received.map((r) => r.id)).toEqual([delivery!.id, delivery!.id]);
  });

  it('after a rotation each delivery carries two signatures, each verifying with its own secret', async () => {
    const { receiver, id, secret, publish } = await hook();
    const rotated = await rotateSecret(services, id);
    secretsUsed.push(rotated.secret);
    await publish('6.0.0');
    await eventually(() => receiver.received.length === 1, 30_000);
    const [received] = receiver.received;
    expect(received!.signature.split(' ')).toHaveLength(2);
    expect(verifies(secret, received!)).toBe(true);
    expect(verifies(rotated.secret, received!)).toBe(true);
  });

  it('three senders on one database: no delivery in flight twice, at most 2 in flight per webhook', async () => {
    let inFlight = 0;
    let most = 0;
    const { receiver, publish } = await hook(() => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => inFlight--, 300);
      return { status: 204, delayMs: 300 };
    });
    const others = [startOutbox(services, { pollMs: 20 }), startOutbox(services, { pollMs: 20 })];
    try {
      // All at once, so that a backlog builds up for the three senders to race over.
      await Promise.all(Array.from({ length: 24 }, (_, i) => publish(`7.0.${i}`)));
      await eventually(() => new Set(receiver.received.map((r) => r.id)).size === 24, 60_000);
    } finally {
      await Promise.all(others.map((o) => o.stop()));
    }
    expect(receiver.maxOverlapPerId()).toBe(1);
    expect(receiver.received).toHaveLength(24);
    expect(most).toBeLessThanOrEqual(2);
  }, 120_000);

  it('the audit log stores no secret: every stored entry searched for every secret used', async () => {
    await writeAudit(server.db, {
      actor: { userId: null, username: 'admin', tokenId: null },
      via: 'password',
      action: 'login',
      outcome: 'failed',
      details: { password: ADMIN_PASSWORD, nested: { token: admin, webhookSecret: secretsUsed.at(-1) }, authorization: `Bearer ${admin}`, kept: 'visible' },
    });
    const rows = await server.db('audit').select('*');
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const stored = JSON.stringify(rows);
    expect(stored).toContain('visible');
    for (const secret of secretsUsed) expect(stored).not.toContain(secret);
  });
});
