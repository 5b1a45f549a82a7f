// The webhook sender alone (server/services/outbox.ts): N deliveries queued for one webhook, all due at
// once, drained by the built server (`bin/repoadmin server`, as it ships, in its own process) to a
// receiver in its own process (bench/receiver.ts). Prints the deliveries a second and the CPU each
// delivery took in the server process, in the database (PostgreSQL's processes for this database) and
// in the receiver; after each round, the floor: as many POSTs of the same body, signed alike, from a
// bare `node:http` keep-alive agent in this process, as many at a time as the sender has in flight for
// one webhook (PER_WEBHOOK), and the sender's CPU per delivery over the floor's.
// Run by `npm run bench` (its webhook sender section, with --json), or alone while changing the sender:
//   node --import tsx bench/outbox-drain.ts [--kind postgres|mysql] [--deliveries N] [--rounds R] [--json FILE]
//     [--root DIR] (the server built in another checkout) [--cpu-prof DIR] (a CPU profile of the server)
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import { PER_WEBHOOK } from '../server/services/outbox.js';
import { signatureHeader } from '../server/webhooks/signature.js';
import { cpuMsOf, startReceiver, startServer } from './processes.js';

const { values } = parseArgs({
  options: {
    kind: { type: 'string', default: 'postgres' },
    deliveries: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    json: { type: 'string' },
    root: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const kind = values.kind === 'mysql' ? 'mysql' : 'postgres';
const count = Number(values.deliveries);
const rounds = Number(values.rounds);
const PG_URL = process.env.REPOADMIN_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MYSQL_URL = process.env.REPOADMIN_BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** One round: the sender's drain and the bare POSTs after it, CPU in µs per delivery. */
export interface DrainRound {
  kind: 'postgres' | 'mysql';
  round: number;
  deliveries: number;
  perSecond: number;
  senderUs: number;
  databaseUs?: number;
  receiverUs: number;
  /**
   * The floor's POSTs at a time: the sender's attempts in flight for one webhook (PER_WEBHOOK). The
   * receiver cannot tell: it answers each request within the read that brought it, so it never has
   * two open, whatever the sender has in flight.
   */
  concurrency: number;
  bareUs: number;
  barePerSecond: number;
}

const name = `repoadmin_drain_${randomBytes(5).toString('hex')}`;
const adminUrl = kind === 'mysql' ? MYSQL_URL : PG_URL;
const admin: Knex = knexFactory({ client: kind === 'mysql' ? 'mysql2' : 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
await admin.raw(`create database ${name}`);
const url = new URL(adminUrl);
const env = {
  REPO_MAN_DB_JDBC: kind === 'mysql' ? 'mariadb' : 'postgres',
  REPO_MAN_DB_HOST: url.hostname,
  REPO_MAN_DB_PORT: url.port || (kind === 'mysql' ? '3306' : '5432'),
  REPO_MAN_DB_USER: decodeURIComponent(url.username),
  REPO_MAN_DB_PASS: decodeURIComponent(url.password),
  REPO_MAN_DB_DATABASE: name,
  REPO_MAN_ADMIN_PASSWORD: 'drain-admin-pw',
  REPO_MAN_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
  REPO_MAN_LOG_LEVEL: 'warn',
};
const receiver = await startReceiver();
// The built server, which migrates the new database before it listens; this process only fills and watches it.
const server = await startServer({ env, root: values.root, cpuProfileDir: values['cpu-prof'] });
const db: Knex = knexFactory({ client: kind === 'mysql' ? 'mysql2' : 'pg', connection: Object.assign(new URL(adminUrl), { pathname: `/${name}` }).href, pool: { min: 0, max: 2 } });
/** The database's own processes serving this database (PostgreSQL only). */
async function backendPids(): Promise<number[]> {
  if (kind !== 'postgres') return [];
  const { rows } = await admin.raw('select pid from pg_stat_activity where datname = ?', [name]);
  return (rows as { pid: number }[]).map((r) => r.pid);
}
const dbCpu = async (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMsOf(pid), 0);

/**
 * The floor: `n` POSTs of `body` to `url`, each with the headers the sender sends (its signature
 * made the same way), `concurrency` at a time over kept-alive connections; the process's CPU per
 * POST (µs) and the POSTs a second.
 */
async function barePosts(url: string, n: number, concurrency: number, body: string, secret: string): Promise<{ us: number; perSecond: number }> {
  const agent = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const id = `${BARE_ID}${randomUUID()}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const req = http.request(url, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'bare',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader([secret], id, timestamp, body),
        },
      }, (res) => {
        res.resume();
        res.once('end', resolve);
      });
      req.once('error', reject);
      req.end(body);
    });
  let sent = 0;
  const cpu = process.cpuUsage();
  const at = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (sent++ < n) await post();
  }));
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - at) / 1000;
  agent.destroy();
  return { us: (used.user + used.system) / n, perSecond: n / seconds };
}

/** The webhook-id prefix of the floor's POSTs, to tell them apart at the receiver. */
const BARE_ID = 'bare-';
const results: DrainRound[] = [];
try {
  const webhookId = randomUUID();
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  await db('webhooks').insert({ id: webhookId, url: `${receiver.url}/hook`, events: '["version.published"]', projects: null, active: true, secret });
  const body = JSON.stringify({ type: 'version.published', timestamp: new Date().toISOString(), data: { projectName: 'p', branch: 'main', groupId: 'g', artifactId: 'a', version: '1.0.0', padding: 'x'.repeat(300) } });
  let seq = 0;
  for (let round = 1; round <= rounds; round++) {
    const rows = Array.from({ length: count }, () => ({
      id: randomUUID(), webhook_id: webhookId, event_id: null, event_seq: ++seq, type: 'version.published', body,
      status: 'pending', next_attempt_at: new Date(Date.now() + 3_600_000),
    }));
    for (let i = 0; i < rows.length; i += 500) await db('deliveries').insert(rows.slice(i, i + 500));
    await new Promise((r) => setTimeout(r, 500));
    const pids = await backendPids();
    const before = { server: cpuMsOf(server.pid), db: await dbCpu(pids), receiver: cpuMsOf(receiver.pid), at: performance.now() };
    await db('deliveries').where({ status: 'pending' }).update({ next_attempt_at: db.fn.now(3) });
    for (;;) {
      const [{ n }] = (await db('deliveries').count({ n: '*' }).where({ status: 'pending' })) as [{ n: number | string }];
      if (Number(n) === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - before.at) / 1000;
    const serverMs = cpuMsOf(server.pid) - before.server;
    const dbMs = (await dbCpu(pids)) - before.db;
    const receiverMs = cpuMsOf(receiver.pid) - before.receiver;
    const [{ n: delivered }] = (await db('deliveries').count({ n: '*' }).where({ status: 'delivered' })) as [{ n: number | string }];
    const concurrency = PER_WEBHOOK;
    // Warmed up as the sender is by the rounds before (the first round is the sender's warm-up).
    await barePosts(`${receiver.url}/hook`, Math.min(count, 500), concurrency, body, secret);
    const bare = await barePosts(`${receiver.url}/hook`, count, concurrency, body, secret);
    const row: DrainRound = {
      kind, round, deliveries: count, perSecond: count / seconds, senderUs: (serverMs * 1000) / count,
      databaseUs: kind === 'postgres' ? (dbMs * 1000) / count : undefined, receiverUs: (receiverMs * 1000) / count,
      concurrency, bareUs: bare.us, barePerSecond: bare.perSecond,
    };
    results.push(row);
    process.stdout.write(
      `${kind} round ${round}: ${count} deliveries in ${seconds.toFixed(2)} s = ${Math.round(row.perSecond)}/s; ` +
        `server CPU ${Math.round(row.senderUs)} µs/delivery` +
        (row.databaseUs === undefined ? '' : `, PostgreSQL CPU ${Math.round(row.databaseUs)} µs/delivery`) +
        `, receiver CPU ${Math.round(row.receiverUs)} µs/delivery; delivered in all ${delivered}; ` +
        `bare POSTs at ${concurrency} at a time: ${Math.round(bare.perSecond)}/s, ${Math.round(bare.us)} µs each ` +
        `(sender/bare ${(row.senderUs / bare.us).toFixed(2)})\n`,
    );
  }
  const received = (await (await fetch(`${receiver.url}/received`)).json()) as [string, number][];
  // The bare POSTs reached the receiver too: count the sender's alone.
  const fromSender = received.filter(([id]) => !id.startsWith(BARE_ID));
  const ids = new Set(fromSender.map(([id]) => id));
  process.stdout.write(`received ${fromSender.length} requests from the sender, ${ids.size} distinct webhook-ids\n`);
  if (values.json) writeFileSync(values.json, JSON.stringify(results));
} finally {
  await db.destroy();
  await server.stop();
  await receiver.stop();
  await admin.raw(kind === 'mysql' ? `drop database ${name}` : `drop database ${name} with (force)`);
  await admin.destroy();
}
