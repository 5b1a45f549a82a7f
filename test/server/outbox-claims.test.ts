// Claiming deliveries on every database kind: one statement claims for many webhooks at once, and
// several senders claiming at the same time never have more than a webhook's 2 requests in flight
// nor take a delivery another holds (docs/webhooks.md, "Delivery").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../server/db/connect.js';
import { claimDeliveries, insertDeliveries, insertWebhook, recordAttempts, releaseDeliveries } from '../../server/db/webhooks.js';
import { dbKinds, openMigratedDatabase } from '../helpers/db.js';

describe.each(dbKinds())('claiming deliveries on %s', (kind) => {
  let opened: Database;
  let hook = 0;

  beforeAll(async () => {
    opened = await openMigratedDatabase(kind);
  }, 180_000);
  afterAll(() => opened?.close());

  /** `webhooks` active webhooks, each with `count` due deliveries in event_seq order 1..count. */
  async function webhooksWith(webhooks: number, count: number): Promise<Map<string, string[]>> {
    const db = opened.db;
    const made = new Map<string, string[]>();
    for (let w = 0; w < webhooks; w++) {
      const webhook = await insertWebhook(db, { url: `https://claims${++hook}.example.com/`, events: ['version.published'], projects: null, description: null, active: true }, 'whsec_x');
      made.set(webhook.id, await insertDeliveries(db, Array.from({ length: count }, (_, i) => ({ webhookId: webhook.id, eventId: null, eventSeq: i + 1, type: 'version.published', body: `{"n":${i + 1}}` }))));
    }
    return made;
  }

  /** The statements a claim sends (transaction control aside). */
  async function statementsOf(claim: () => Promise<unknown>): Promise<string[]> {
    const sent: string[] = [];
    const count = (query: { sql: string }) => {
      if (!/^(begin|commit|rollback|set transaction)\b/i.test(query.sql)) sent.push(query.sql);
    };
    opened.db.on('query', count);
    try {
      await claim();
    } finally {
      opened.db.off('query', count);
    }
    return sent;
  }

  it('claims for many webhooks in one statement: the same statements for ten webhooks with a backlog as for one', async () => {
    const backlog = await webhooksWith(10, 6);
    const ids = [...backlog.keys()];
    const claimOf = (except: string[]) => claimDeliveries(opened.db, { webhooks: 16, perWebhook: 2, batch: (_id, inFlight) => inFlight * 2, leaseMs: 30_000, except });
    let batches: Awaited<ReturnType<typeof claimOf>> = [];
    const forTen = await statementsOf(async () => {
      batches = await claimOf([]);
    });
    expect(batches.map((b) => b.webhook.id).sort()).toEqual([...ids].sort());
    for (const batch of batches) {
      expect(batch.inFlight).toBe(2);
      expect(batch.deliveries.map((d) => d.id)).toEqual(backlog.get(batch.webhook.id)!.slice(0, 4));
    }
    // The webhooks locked, their deliveries claimed, the claimed ones leased: three, whatever the number of webhooks.
    expect(forTen).toHaveLength(3);
    expect(forTen.filter((sql) => /row_number\(\) over \(partition by d\.webhook_id/i.test(sql))).toHaveLength(1);

    await releaseDeliveries(opened.db, batches.flatMap((b) => b.deliveries.map((d) => ({ id: d.id, leaseToken: b.leaseToken }))));
    const forOne = await statementsOf(async () => {
      batches = await claimOf(ids.slice(1));
    });
    expect(batches.map((b) => b.webhook.id)).toEqual([ids[0]]);
    expect(forOne).toHaveLength(forTen.length);
    await releaseDeliveries(opened.db, batches.flatMap((b) => b.deliveries.map((d) => ({ id: d.id, leaseToken: b.leaseToken }))));
    // Out of the way of the next case's claims.
    await opened.db('webhooks').whereIn('id', ids).update({ active: false });
  });

  it('several senders claiming at once: never more than 2 in flight per webhook, never a delivery two hold, every delivery sent once', async () => {
    const backlog = await webhooksWith(10, 12);
    const mine = [...backlog.keys()];
    const total = [...backlog.values()].reduce((n, ids) => n + ids.length, 0);
    // What the senders hold now, as they see it: their room per webhook and the deliveries they hold.
    const inFlight = new Map<string, number>();
    const holding = new Set<string>();
    const sent: string[] = [];
    let most = 0;
    const violations: string[] = [];
    const pause = () => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 8)));

    const sender = async () => {
      let idle = 0;
      while (sent.length < total && idle < 200) {
        // A batch larger than the room (3 for 2), so that leased deliveries waiting in a batch count too.
        const batches = await claimDeliveries(opened.db, { webhooks: 4, perWebhook: 2, batch: (_id, room) => room + 1, leaseMs: 30_000 });
        if (batches.length === 0) {
          idle++;
          await pause();
          continue;
        }
        idle = 0;
        for (const batch of batches) {
          const now = (inFlight.get(batch.webhook.id) ?? 0) + batch.inFlight;
          inFlight.set(batch.webhook.id, now);
          most = Math.max(most, now);
          if (now > 2) violations.push(`${now} in flight for ${batch.webhook.id}`);
          for (const d of batch.deliveries) {
            if (holding.has(d.id)) violations.push(`${d.id} claimed twice`);
            holding.add(d.id);
          }
        }
        await pause();
        // The first of each batch is sent, the rest given back: counted free before the database frees them.
        for (const batch of batches) {
          inFlight.set(batch.webhook.id, inFlight.get(batch.webhook.id)! - batch.inFlight);
          for (const d of batch.deliveries) holding.delete(d.id);
        }
        await recordAttempts(opened.db, batches.map((b) => ({ claim: { id: b.deliveries[0]!.id, webhookId: b.webhook.id, leaseToken: b.leaseToken }, result: { status: 204, durationMs: 1 }, retryInMs: undefined })));
        sent.push(...batches.map((b) => b.deliveries[0]!.id));
        await releaseDeliveries(opened.db, batches.flatMap((b) => b.deliveries.slice(1).map((d) => ({ id: d.id, leaseToken: b.leaseToken }))));
      }
    };
    await Promise.all(Array.from({ length: 4 }, sender));

    expect(violations).toEqual([]);
    expect(most).toBe(2);
    expect(sent.sort()).toEqual([...backlog.values()].flat().sort());
    const left = await opened.db('deliveries').whereIn('webhook_id', mine).whereNot({ status: 'delivered' }).count({ n: '*' });
    expect(Number(left[0]!.n)).toBe(0);
  });
});
