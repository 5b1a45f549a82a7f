// Publishing with one webhook configured beside publishing with none, in one run on one server
// (issue 24's acceptance: at least 0.90 of the throughput without), the rate at which the outbox
// delivers, and the lag from a publish's commit to its delivery (p50, p99). Run by `npm run bench`
// (after the PostgreSQL part) and alone by `npm run bench:webhooks` (webhooks.ts).
//
// One built server on a new PostgreSQL database seeded with `records` records, and a receiver on
// 127.0.0.1 that answers 204 at once. Rounds of two blocks: `seconds` of publishing (autocannon,
// `connections` at once) with the webhook switched off (PATCH active=false: no delivery is queued),
// then as long with it on, then a wait until every delivery of that block arrived, so the next
// block without the webhook does not share the machine with the sender's backlog. Then `paced`
// publishes a second, one at a time, for the lag below saturation. The lag is the arrival time
// minus the event's timestamp (written by the publish's own statement, so its commit follows
// within the statement's duration).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { ServerConfig } from '../server/config.js';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';
import { publishedRecord } from './dataset.js';
import { type HttpRequest, type Measurement, loadHttp } from './load.js';
import { type Child, call, startServer } from './processes.js';
import { seedVersions } from './seed.js';

export interface WebhookBenchOptions {
  pgUrl: URL;
  records: number;
  seconds: number;
  rounds: number;
  connections: number;
  paced: number;
}

export interface WebhookBenchResult {
  /** The report's section, a Markdown heading and its tables. */
  markdown: string;
  /** Publish throughput with the webhook over without it, all rounds together. */
  ratio: number;
  /** Publishes that failed. */
  errors: number;
}

const ADMIN_PASSWORD = `bench-${randomBytes(9).toString('base64url')}`;
/** How long a block's deliveries may take to arrive after its last publish. */
const DRAIN_LIMIT_MS = 300_000;

interface Arrival {
  id: string;
  arrivedAt: number;
  /** When the event was written (its `timestamp`), in milliseconds. */
  eventAt: number;
}

/** A receiver that answers 204 at once and notes when each delivery came and when its event was written. */
async function startReceiver(): Promise<{ url: string; arrivals: Arrival[]; close(): Promise<void> }> {
  const arrivals: Arrival[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrivedAt = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
      arrivals.push({ id: String(req.headers['webhook-id']), arrivedAt, eventAt: Date.parse(body.timestamp) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function request(server: Child, method: string, route: string, token: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}${route}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${method} ${route} failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export async function measureWebhooks(options: WebhookBenchOptions, progress: (line: string) => void): Promise<WebhookBenchResult> {
  const { pgUrl: PG_URL, records, seconds, rounds, connections, paced } = options;
  const name = `repoadmin_bench_webhooks_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const settings: ServerConfig['db'] = {
    kind: 'postgres', driver: 'pg', host: PG_URL.hostname, port: Number(PG_URL.port || 5432),
    user: decodeURIComponent(PG_URL.username || 'postgres'), password: decodeURIComponent(PG_URL.password), database: name,
    connectTimeoutMs: 5_000, statementTimeoutMs: 600_000, dataDir: MEMORY,
  };
  const receiver = await startReceiver();
  let server: Child | undefined;
  const closing: (() => Promise<void>)[] = [];
  try {
    const opened = await openDatabase(settings);
    await migrateLatest(opened.db);
    await opened.close();
    const pool = new pg.Pool({ host: settings.host, port: settings.port, user: settings.user, password: settings.password, database: name, max: 4 });
    await seedVersions([pool, pool], records, 0, progress);
    await pool.query('vacuum analyze');
    await pool.end();

    server = await startServer({
      env: {
        REPO_MAN_DB_JDBC: 'postgres',
        REPO_MAN_DB_HOST: settings.host,
        REPO_MAN_DB_PORT: String(settings.port),
        REPO_MAN_DB_USER: settings.user,
        REPO_MAN_DB_PASS: settings.password,
        REPO_MAN_DB_DATABASE: name,
        REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
        REPO_MAN_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
      },
    });
    const { token } = (await call(server, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD })) as { token: string };
    const hook = await request(server, 'POST', '/v1/webhooks', token, { url: receiver.url, active: false });
    const hookId = String(hook.id);
    const publish: HttpRequest = {
      method: 'POST',
      path: '/v1/repositories',
      headers: { authorization: `Bearer ${token}` },
      body: (i) => JSON.stringify(publishedRecord(i)),
    };
    const load = { connections, seconds, warmupSeconds: 0 };
    // The outbox's own tables, read beside the server: events not numbered yet have no delivery yet.
    const watch = new pg.Pool({ host: settings.host, port: settings.port, user: settings.user, password: settings.password, database: name, max: 1 });
    closing.push(() => watch.end());
    const outbox = async () => {
      const { rows } = await watch.query(`select (select count(*) from events where seq is null) as unnumbered,
        (select count(*) from deliveries where status = 'delivered') as delivered, (select count(*) from deliveries) as queued`);
      return { unnumbered: Number(rows[0].unnumbered), delivered: Number(rows[0].delivered), queued: Number(rows[0].queued) };
    };
    /** Until every event is numbered and every delivery queued has arrived. */
    const settled = async (what: string) => {
      const until = Date.now() + DRAIN_LIMIT_MS;
      for (;;) {
        const now = await outbox();
        if (now.unnumbered === 0 && now.delivered === now.queued && new Set(receiver.arrivals.map((a) => a.id)).size === now.queued) return;
        if (Date.now() > until) throw new Error(`${what}: not settled within ${DRAIN_LIMIT_MS / 1000} s: ${JSON.stringify(now)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    progress(`warming up: ${seconds} s of publishing`);
    await loadHttp(server.url, publish, load);

    const without: Measurement[] = [];
    const withHook: Measurement[] = [];
    const rates: number[] = [];
    /** Deliveries per second once publishing stopped: the sender alone, working off the backlog. */
    const drainRates: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      await request(server, 'PATCH', `/v1/webhooks/${hookId}`, token, { active: false });
      without.push(await loadHttp(server.url, publish, load));
      // The last events of the block numbered while the webhook is off: none of them is delivered.
      await settled(`round ${round} without`);
      await request(server, 'PATCH', `/v1/webhooks/${hookId}`, token, { active: true });
      const from = receiver.arrivals.length;
      const started = Date.now();
      withHook.push(await loadHttp(server.url, publish, load));
      const loadEnded = Date.now();
      await settled(`round ${round}`);
      const block = receiver.arrivals.slice(from);
      const lastAt = Math.max(...block.map((a) => a.arrivedAt));
      rates.push(block.length / ((lastAt - started) / 1000));
      const afterLoad = block.filter((a) => a.arrivedAt > loadEnded);
      if (afterLoad.length > 0 && lastAt > loadEnded) drainRates.push(afterLoad.length / ((lastAt - loadEnded) / 1000));
      progress(
        `round ${round}: without ${Math.round(without.at(-1)!.perSecond)}/s, with ${Math.round(withHook.at(-1)!.perSecond)}/s, ` +
          `${block.length} deliveries at ${Math.round(rates.at(-1)!)}/s`,
      );
    }
    // Lag below saturation: publishes one at a time at --paced per second, the webhook on.
    const fromPaced = receiver.arrivals.length;
    const pacedStart = Date.now();
    for (let i = 0; i < paced * seconds; i++) {
      await new Promise((r) => setTimeout(r, Math.max(0, pacedStart + (i * 1000) / paced - Date.now())));
      await request(server, 'POST', '/v1/repositories', token, publishedRecord(1_000_000_000 + i));
    }
    await settled('the paced publishes');
    const pacedLags = receiver.arrivals.slice(fromPaced).map((a) => a.arrivedAt - a.eventAt).sort((a, b) => a - b);
    progress(`paced: ${pacedLags.length} deliveries, lag p50 ${percentile(pacedLags, 50)} ms, p99 ${percentile(pacedLags, 99)} ms`);

    const errors = [...without, ...withHook].reduce((n, m) => n + m.errors, 0);
    const sum = (ms: Measurement[]) => ms.reduce((n, m) => n + m.ok, 0) / ms.reduce((n, m) => n + m.seconds, 0);
    const lags = receiver.arrivals.slice(0, fromPaced).map((a) => a.arrivedAt - a.eventAt).sort((a, b) => a - b);
    const mean = (xs: number[]) => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : NaN);
    const duplicates = receiver.arrivals.length - new Set(receiver.arrivals.map((a) => a.id)).size;
    const lines = [
      '## Webhooks: publishing with one webhook beside none, delivery rate and lag',
      '',
      `PostgreSQL, ${records.toLocaleString('en')} records seeded, ${connections} connections publishing, ${rounds} round${rounds === 1 ? "" : "s"} of ${seconds} s per side,` +
        ` one server (\`bin/repoadmin server\`), the receiver on 127.0.0.1 answering 204 at once. Node ${process.version}, ${(await import('node:os')).cpus().length} cores.`,
      '',
      '| round | publish/s without | publish/s with one webhook | ratio | deliveries/s |',
      '|---|---|---|---|---|',
      ...without.map((w, i) => `| ${i + 1} | ${Math.round(w.perSecond)} | ${Math.round(withHook[i]!.perSecond)} | ${(withHook[i]!.perSecond / w.perSecond).toFixed(2)} | ${Math.round(rates[i]!)} |`),
      `| all | ${Math.round(sum(without))} | ${Math.round(sum(withHook))} | **${(sum(withHook) / sum(without)).toFixed(2)}** (target at least 0.90) | ${mean(rates)} (mean) |`,
      '',
      `Deliveries/s of a round: its block's deliveries over the time from the block's start to the last arrival; once publishing stopped,` +
        ` the sender alone worked off the backlog at ${mean(drainRates)}/s (mean of ${drainRates.map(Math.round).join(', ')}).`,
      '',
      '| commit to delivery | deliveries | p50 | p99 | max |',
      '|---|---|---|---|---|',
      `| under the publishing load above | ${lags.length.toLocaleString('en')} | ${percentile(lags, 50)} ms | ${percentile(lags, 99)} ms | ${lags.at(-1)} ms |`,
      `| ${paced} publishes/s, one at a time | ${pacedLags.length.toLocaleString('en')} | ${percentile(pacedLags, 50)} ms | ${percentile(pacedLags, 99)} ms | ${pacedLags.at(-1)} ms |`,
      '',
      `${duplicates} deliveries arrived twice. Publish latency p99 without the webhook ${without.map((m) => m.p99Ms.toFixed(1)).join(', ')} ms,` +
        ` with it ${withHook.map((m) => m.p99Ms.toFixed(1)).join(', ')} ms.` +
        (errors > 0 ? ` ${errors} publishes failed.` : ''),
      '',
    ];
    return { markdown: lines.join('\n'), ratio: sum(withHook) / sum(without), errors };
  } finally {
    for (const close of closing) await close();
    await server?.stop();
    await receiver.close();
    const again = new pg.Client({ connectionString: PG_URL.toString() });
    await again.connect();
    await again.query(`drop database if exists ${name} with (force)`);
    await again.end();
  }
}
