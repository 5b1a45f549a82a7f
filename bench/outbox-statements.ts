// The webhook sender's database work alone (server/db/webhooks.ts), in this process on PostgreSQL:
// claim a batch of one webhook's due deliveries and record an attempt of each, round after round,
// and print the CPU (user + system) each step took per delivery. The sender's whole drain, with
// its requests, is bench/outbox-drain.ts; this one tells the statements' part apart.
//   node --import tsx bench/outbox-statements.ts [--batch 256] [--rounds 40] [--cpu-prof FILE]
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { claimDeliveries, insertDeliveries, insertWebhook, recordAttempts } from '../server/db/webhooks.js';
import { onScratchDatabase } from './scratch.js';

const { values } = parseArgs({
  options: { batch: { type: 'string', default: '256' }, rounds: { type: 'string', default: '40' }, 'cpu-prof': { type: 'string' } },
});
const batch = Number(values.batch);
const rounds = Number(values.rounds);
/** Rounds before these are not counted: the first statements of a connection and of the process are slower. */
const WARMUP_ROUNDS = 5;
await onScratchDatabase('repoadmin_statements', async (db) => {
  const webhook = await insertWebhook(db, { url: 'http://127.0.0.1:9/hook', events: ['version.published'], projects: null, description: null, active: true }, 'whsec_bench');
  const body = JSON.stringify({ type: 'version.published', data: { padding: 'x'.repeat(300) } });
  const total = batch * rounds;
  for (let i = 0; i < total; i += 500) {
    const rows = Array.from({ length: Math.min(500, total - i) }, (_, k) => ({ webhookId: webhook.id, eventId: null, eventSeq: i + k + 1, type: 'version.published', body }));
    await insertDeliveries(db, rows);
  }
  const session = values['cpu-prof'] ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const spent = { claim: 0, record: 0, system: 0, deliveries: 0 };
  for (let round = 0; round < rounds; round++) {
    const beforeClaim = process.cpuUsage();
    const [claimed] = await claimDeliveries(db, { webhooks: 16, perWebhook: 2, batch: () => batch, leaseMs: 30_000 });
    const claim = process.cpuUsage(beforeClaim);
    if (!claimed) break;
    const records = claimed.deliveries.map((d, i) => ({
      claim: { id: d.id, webhookId: webhook.id, leaseToken: claimed.leaseToken }, result: { status: 200, durationMs: i % 3 }, retryInMs: undefined,
    }));
    const beforeRecord = process.cpuUsage();
    await recordAttempts(db, records);
    const record = process.cpuUsage(beforeRecord);
    if (round < WARMUP_ROUNDS) continue;
    spent.claim += claim.user + claim.system;
    spent.record += record.user + record.system;
    spent.system += claim.system + record.system;
    spent.deliveries += claimed.deliveries.length;
  }
  if (session) writeFileSync(values['cpu-prof']!, JSON.stringify((await session.post('Profiler.stop')).profile));
  const per = (us: number) => (us / spent.deliveries).toFixed(1);
  console.log(`batches of ${batch}, ${spent.deliveries} deliveries measured: claim ${per(spent.claim)} µs a delivery, record ${per(spent.record)} µs (system ${per(spent.system)} of both)`);
});
