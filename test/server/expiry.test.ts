// Scheduled expiry: events after 30 days, finished deliveries after 30, audit entries after 365;
// nothing younger, and no pending delivery, goes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireAudit, writeAudit } from '../../server/db/audit.js';
import { appendEvent, expireEvents } from '../../server/db/events.js';
import { deleteWebhook, expireDeliveries, insertDeliveries, insertWebhook, redeliver } from '../../server/db/webhooks.js';
import { dispatchEvents } from '../../server/services/events.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('expiry', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  }, 180_000);
  afterAll(() => server?.close());

  it('deletes only what is older than its days', async () => {
    const db = server.db;
    const now = new Date();
    const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
    await appendEvent(db, 'retention.finished', { old: true });
    await appendEvent(db, 'retention.finished', { old: false });
    await dispatchEvents({ db }, { wait: true });
    const [oldEvent] = await db('events').select('id').where('data', 'like', '%"old":true%');
    await db('events').where({ id: oldEvent.id }).update({ created_at: daysAgo(31) });
    expect(await expireEvents(db, now, 30)).toBe(1);
    expect(await db('events').where('data', 'like', '%"old":false%')).toHaveLength(1);

    const hook = await insertWebhook(db, { url: 'https://x.example.com/', events: ['retention.finished'], projects: null, description: null, active: false }, 'whsec_x');
    const [done, pending] = await insertDeliveries(db, [1, 2].map(() => ({ webhookId: hook.id, eventId: null, eventSeq: null, type: 'ping', body: '{}' })));
    await db('deliveries').where({ id: done }).update({ status: 'delivered', updated_at: daysAgo(31) });
    await db('deliveries').where({ id: pending }).update({ updated_at: daysAgo(31) });
    expect(await expireDeliveries(db, now)).toBe(1);
    expect((await db('deliveries').select('id')).map((r: { id: string }) => r.id)).toEqual([pending]);
    // What touched no row is a 404, on PGlite too (whose driver answers with a result object).
    await expect(redeliver(db, hook.id, done!)).rejects.toMatchObject({ code: 'not_found' });
    await deleteWebhook(db, hook.id);
    await expect(deleteWebhook(db, hook.id)).rejects.toMatchObject({ code: 'not_found' });

    await writeAudit(db, { action: 'login', outcome: 'ok' });
    await writeAudit(db, { action: 'user.deleted', outcome: 'ok' });
    await db('audit').where({ action: 'login' }).update({ at: daysAgo(366) });
    expect(await expireAudit(db, now, 365)).toBe(1);
    expect(await db('audit').where({ action: 'user.deleted' })).toHaveLength(1);
  });
});
