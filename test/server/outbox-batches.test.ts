// The outbox's batches on every database kind: a sender claims many due deliveries of a webhook at
// once (every leased one counting against the webhook's 2 in flight), gives back what it did not send,
// and records many finished attempts in one statement, each webhook's failures in a row counted in order;
// an idle sender only looks.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import type { Database } from '../../server/db/connect.js';
import { type OutboxServices, RECORD_DELAY_MS, startOutbox } from '../../server/services/outbox.js';
import { SEND_TIMEOUT_MS } from '../../server/webhooks/send.js';
import { claimDeliveries, insertDeliveries, insertWebhook, recordAttempts, redeliver, releaseDeliveries } from '../../server/db/webhooks.js';
import { dbKinds, openMigratedDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/receiver.js';

describe.each(dbKinds())('outbox batches on %s', (kind) => {
  let opened: Database;
  let hook = 0;

  beforeAll(async () => {
    opened = await openMigratedDatabase(kind);
  }, 180_000);
  afterAll(() => opened?.close());

  /** An active webhook with `count` due deliveries, in event_seq order 1..count. */
  async function webhookWith(count: number) {
    const db = opened.db;
    const webhook = await insertWebhook(db, { url: `https://hook${++hook}.example.com/`, events: ['version.published'], projects: null, description: null, active: true }, 'whsec_x');
    const ids = await insertDeliveries(db, Array.from({ length: count }, (_, i) => ({ webhookId: webhook.id, eventId: null, eventSeq: i + 1, type: 'version.published', body: `{"n":${i + 1}}` })));
    return { webhookId: webhook.id, ids };
  }
  const claim = (batch: number, except: string[] = []) =>
    claimDeliveries(opened.db, { webhooks: 100, perWebhook: 2, batch: () => batch, leaseMs: 30_000, except });
  const mine = async (webhookId: string, batch: number, except: string[] = []) => (await claim(batch, except)).find((b) => b.webhook.id === webhookId);

  it('an idle sender looks with one statement a round, outside a transaction, and goes on as soon as there is work', async () => {
    // First in the file: no event and no webhook yet.
    const db = opened.db;
    const built: string[] = [];
    const count = (query: { sql: string }) => built.push(query.sql);
    const ids: string[] = [];
    const receiver = http.createServer((req, res) => {
      ids.push(String(req.headers['webhook-id']));
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const config = loadConfig([], {});
    const services: OutboxServices = { db, config: { ...config, webhooks: { ...config.webhooks, allowNetworks: ['127.0.0.0/8'] } }, log: { warn() {}, error() {} } as unknown as OutboxServices['log'], now: () => new Date() };
    db.on('query', count);
    let rounds = 0;
    const outbox = startOutbox(services, { pollMs: 20, roundMs: 20, onRound: () => rounds++ });
    try {
      // Twenty rounds with nothing to do: the look and nothing else (PostgreSQL's runs past
      // knex's query event, the other kinds' through it), so no transaction, no lock.
      await eventually(async () => rounds >= 20, 30_000);
      expect(built.filter((sql) => !sql.startsWith('select exists (select 1 from events where seq is null)'))).toEqual([]);
      db.off('query', count);
      const webhook = await insertWebhook(db, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['version.published'], projects: null, description: null, active: true }, 'whsec_x');
      const [queued] = await insertDeliveries(db, [{ webhookId: webhook.id, eventId: null, eventSeq: 1, type: 'version.published', body: '{"n":1}' }]);
      await eventually(async () => (await db('deliveries').where({ id: queued, status: 'delivered' })).length === 1, 10_000);
      expect(ids).toEqual([queued]);
      await db('webhooks').where({ id: webhook.id }).update({ active: false });
    } finally {
      db.off('query', count);
      await outbox.stop();
      receiver.closeAllConnections();
      receiver.close();
    }
  });

  it('claims a batch in commit order; leased deliveries count against the 2 in flight until recorded or given back', async () => {
    const { webhookId, ids } = await webhookWith(6);
    const first = (await mine(webhookId, 3))!;
    expect(first.deliveries.map((d) => d.id)).toEqual(ids.slice(0, 3));
    expect(first.inFlight).toBe(2);
    expect(first.webhook).toMatchObject({ id: webhookId, active: true, secrets: ['whsec_x'] });
    // Three leased: no slot left for another sender, and none for this one's own exceptions.
    expect(await mine(webhookId, 3)).toBeUndefined();
    await releaseDeliveries(opened.db, first.deliveries.slice(1).map((d) => ({ id: d.id, leaseToken: first.leaseToken })));
    expect(await mine(webhookId, 3, [webhookId])).toBeUndefined();
    // One still leased: the next batch may have one request in flight, and starts after it.
    const second = (await mine(webhookId, 3))!;
    expect(second.inFlight).toBe(1);
    expect(second.deliveries.map((d) => d.id)).toEqual(ids.slice(1, 4));
  });

  it('a redelivery asked for while a delivery is leased keeps its place: no second sender takes it until the attempt under way is over', async () => {
    const { webhookId, ids } = await webhookWith(2);
    const batch = (await mine(webhookId, 2))!;
    expect(batch.deliveries.map((d) => d.id)).toEqual(ids);
    await redeliver(opened.db, webhookId, ids[0]!);
    // Both places are still taken: a third request would be in flight at once.
    expect(await mine(webhookId, 2)).toBeUndefined();
    // The attempt ends: not recorded (the redelivery replaces it), and its place is free for the redelivery.
    const recorded = await recordAttempts(opened.db, [{ claim: { id: ids[0]!, webhookId, leaseToken: batch.leaseToken }, result: { status: 204, durationMs: 1 }, retryInMs: undefined }]);
    expect([...recorded.recorded]).toEqual([]);
    const again = (await mine(webhookId, 2))!;
    expect(again.deliveries.map((d) => d.id)).toEqual([ids[0]]);
    expect(again.inFlight).toBe(1);
  });

  it('records many attempts in one statement: each its outcome, the webhook its failures in a row in order, a lost lease not at all', async () => {
    const db = opened.db;
    const { webhookId } = await webhookWith(5);
    const batch = (await mine(webhookId, 5))!;
    const [a, b, c, d, e] = batch.deliveries;
    const held = (delivery: typeof a) => ({ id: delivery!.id, webhookId, leaseToken: batch.leaseToken });
    // e's lease was taken over by another sender meanwhile.
    await db('deliveries').where({ id: e!.id }).update({ lease_token: '00000000-0000-4000-8000-000000000000' });
    const updates: string[] = [];
    const count = (query: { sql: string }) => {
      if (/^update\W+deliveries\W/i.test(query.sql)) updates.push(query.sql);
    };
    db.on('query', count);
    let result;
    try {
      result = await recordAttempts(db, [
        { claim: held(c), result: { status: 200, durationMs: 3 }, retryInMs: undefined },
        { claim: held(a), result: { status: 500, error: 'the receiver answered 500', durationMs: 7 }, retryInMs: 60_000 },
        { claim: held(b), result: { status: 410, error: 'the receiver answered 410', durationMs: 5 }, retryInMs: undefined },
        { claim: held(d), result: { error: 'ECONNREFUSED: refused', durationMs: 1 }, retryInMs: 60_000 },
        { claim: held(e), result: { status: 200, durationMs: 2 }, retryInMs: undefined },
      ]);
    } finally {
      db.off('query', count);
    }
    expect(updates).toHaveLength(1);
    expect([...result.recorded].sort()).toEqual([a, b, c, d].map((x) => x!.id).sort());
    expect(result.webhooks.get(webhookId)).toMatchObject({ active: true, secrets: ['whsec_x'] });
    const rows = new Map((await db('deliveries').select('*').where({ webhook_id: webhookId })).map((r: Record<string, unknown>) => [r.id, r]));
    const row = (x: typeof a) => rows.get(x!.id) as Record<string, unknown>;
    expect(row(c)).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200, last_error: null, duration_ms: 3, next_attempt_at: null, lease_token: null, lease_until: null });
    expect(row(a)).toMatchObject({ status: 'pending', attempts: 1, last_status: 500, last_error: 'the receiver answered 500', duration_ms: 7, lease_token: null });
    expect(new Date(row(a).next_attempt_at as string).getTime()).toBeGreaterThan(Date.now() + 30_000);
    expect(row(b)).toMatchObject({ status: 'failed', attempts: 1, last_status: 410, next_attempt_at: null });
    expect(row(d)).toMatchObject({ status: 'pending', last_status: null, last_error: 'ECONNREFUSED: refused', duration_ms: 1 });
    expect(row(e)).toMatchObject({ status: 'pending', attempts: 0, last_status: null });
    // The success came first, then three failures.
    const webhookRow = await db('webhooks').where({ id: webhookId }).first();
    expect(webhookRow.failures_in_row).toBe(3);
    expect(webhookRow.last_success_at).not.toBeNull();

    // Failures only: added to those in a row.
    const again = (await claimDeliveries(db, { webhooks: 100, perWebhook: 2, batch: () => 5, leaseMs: 30_000 })).find((x) => x.webhook.id === webhookId);
    expect(again).toBeUndefined(); // e is still leased by the other sender, a's and d's retries are not due
    await recordAttempts(db, [{ claim: { id: e!.id, webhookId, leaseToken: '00000000-0000-4000-8000-000000000000' }, result: { status: 503, error: 'the receiver answered 503', durationMs: 1 }, retryInMs: 1_000 }]);
    expect((await db('webhooks').where({ id: webhookId }).first()).failures_in_row).toBe(4);
  });

  // A backlog of deliveries sent and recorded: a minute on busy cores, within the suite's limit; not a measure of speed.
  it('a sender sends a backlog from batches over kept-alive connections and records many attempts per statement', async () => {
    const db = opened.db;
    const ids: string[] = [];
    let connections = 0;
    let inFlight = 0;
    let most = 0;
    const receiver = http.createServer((req, res) => {
      ids.push(String(req.headers['webhook-id']));
      most = Math.max(most, ++inFlight);
      req.resume();
      req.on('end', () => setTimeout(() => {
        inFlight--;
        res.writeHead(204).end();
      }, 2));
    });
    receiver.on('connection', () => connections++);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const webhook = await insertWebhook(db, { url, events: ['version.published'], projects: null, description: null, active: true }, 'whsec_x');
    const queued = await insertDeliveries(db, Array.from({ length: 60 }, (_, i) => ({ webhookId: webhook.id, eventId: null, eventSeq: i + 1, type: 'version.published', body: `{"n":${i + 1}}` })));
    const records: string[] = [];
    const count = (query: { sql: string }) => {
      if (/^update\W+deliveries\W+set\W+status/i.test(query.sql)) records.push(query.sql);
    };
    db.on('query', count);
    const config = loadConfig([], {});
    const services: OutboxServices = { db, config: { ...config, webhooks: { ...config.webhooks, allowNetworks: ['127.0.0.0/8'] } }, log: { warn() {}, error() {} } as unknown as OutboxServices['log'], now: () => new Date() };
    const started = performance.now();
    const outbox = startOutbox(services, { pollMs: 20 });
    let sendingMs = 0;
    try {
      await eventually(async () => (await db('deliveries').where({ webhook_id: webhook.id, status: 'delivered' })).length === 60, 30_000);
      sendingMs = performance.now() - started;
    } finally {
      await outbox.stop();
      db.off('query', count);
      receiver.closeAllConnections();
      receiver.close();
    }
    expect(ids).toHaveLength(60);
    expect(new Set(ids)).toEqual(new Set(queued));
    expect(most).toBeLessThanOrEqual(2);
    // Two requests in flight at most: two connections, reused, not one per attempt.
    expect(connections).toBeLessThanOrEqual(2);
    // The first batch is 2 (the webhook's pace unknown), the next ones the rest: a few records, not
    // 60. A record waits up to RECORD_DELAY_MS for more attempts; a batch's end, the stop and the
    // first batch record at once: on two busy cores sending may take seconds, a record per delay.
    expect(records.length).toBeLessThanOrEqual(Math.ceil(sendingMs / RECORD_DELAY_MS) + 4);
    expect(records.length).toBeLessThan(60);
  });

  it('a sender starts no attempt its lease leaves too little room for: what a batch could not start in time is given back and sent later, once', async () => {
    const db = opened.db;
    const ids: string[] = [];
    // Quick answers first, so that the next batch is a large one; then slow ones, which it cannot all start in time.
    const receiver = http.createServer((req, res) => {
      ids.push(String(req.headers['webhook-id']));
      req.resume();
      req.on('end', () => setTimeout(() => res.writeHead(204).end(), ids.length <= 2 ? 1 : 150));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const webhook = await insertWebhook(db, { url, events: ['version.published'], projects: null, description: null, active: true }, 'whsec_x');
    const queued = await insertDeliveries(db, Array.from({ length: 14 }, (_, i) => ({ webhookId: webhook.id, eventId: null, eventSeq: i + 1, type: 'version.published', body: `{"n":${i + 1}}` })));
    const releases: string[] = [];
    const count = (query: { sql: string }) => {
      // Given back: the lease set to null (a binding), not to a time ahead.
      if (/^update\W+deliveries\W+set\W+lease_until\W+=\s*(null|\$1|\?)\s*,/i.test(query.sql)) releases.push(query.sql);
    };
    db.on('query', count);
    const config = loadConfig([], {});
    const services: OutboxServices = { db, config: { ...config, webhooks: { ...config.webhooks, allowNetworks: ['127.0.0.0/8'] } }, log: { warn() {}, error() {} } as unknown as OutboxServices['log'], now: () => new Date() };
    // 300 ms to start the attempts of a batch (the lease less the longest attempt and the room to record it).
    const outbox = startOutbox(services, { pollMs: 20, leaseMs: SEND_TIMEOUT_MS + 10_000 + 300 });
    try {
      await eventually(async () => (await db('deliveries').where({ webhook_id: webhook.id, status: 'delivered' })).length === 14, 30_000);
    } finally {
      await outbox.stop();
      db.off('query', count);
      receiver.closeAllConnections();
      receiver.close();
    }
    expect(releases.length).toBeGreaterThan(0);
    expect(ids).toHaveLength(14);
    expect(new Set(ids)).toEqual(new Set(queued));
  });
});

