// Publishing with one webhook against publishing with none (issue 24), on one server in turns of one
// second: the webhook (created through the API, subscribed to the events a publish writes, pointing
// at receiver.ts) is active during one turn and inactive during the next. After each turn with it,
// the sender drains what the turn queued before the turn without it starts, so that the turns
// without a webhook never share the machine with a sender at work. Besides the two throughputs:
// how many deliveries a second the sender sustained, and the lag from commit to arrival.
import type pg from 'pg';
import { type HttpRequest, type LoadOptions, type Measurement, loadTurns } from './load.js';
import { type Child, cpuMsOf } from './processes.js';
import { busy } from './report.js';

/** The events a publish writes (docs/webhooks.md, "Events"): what the webhook subscribes to. */
export const PUBLISH_EVENTS = ['version.published', 'latest.moved'] as const;
/** How long the sender may take to drain one turn's deliveries before the run gives up. */
const DRAIN_TIMEOUT_MS = 600_000;
const POLL_MS = 20;
/** Room for a publish the load generator stopped waiting for at the end of a turn to commit. */
const SETTLE_MS = 100;

export interface WebhookRow {
  connections: number;
  /** Publishing with no active webhook, and with the one webhook active (turns of one second). */
  without: Measurement;
  with: Measurement;
  /** Events of PUBLISH_EVENTS committed while the webhook was active (warm-up turns included). */
  events: number;
  /** Of those, `version.published`: one per committed publish. */
  published: number;
  /** Deliveries queued for the webhook, delivered (by the database's record), received (distinct webhook-ids). */
  deliveries: number;
  delivered: number;
  received: number;
  /** Requests the receiver got for them: more than `received` when one was sent twice. */
  requests: number;
  /** Deliveries a second arriving during the measured turns with the webhook. */
  whilePublishing: number;
  /** Deliveries a second from the start of each measured turn with the webhook until the sender drained it. */
  untilDrained: number;
  /** Seconds the sender took to drain after the measured turns, in all. */
  drainSeconds: number;
  /** From the event's commit (its row's created_at) to the delivery's arrival at the receiver, measured turns. */
  lagP50Ms: number;
  lagP99Ms: number;
  /** Seconds the whole measurement took at this concurrency, the drains included. */
  seconds: number;
}

interface Window {
  counted: boolean;
  /** Unix milliseconds: the webhook active, the turn's load ended, its deliveries all made. */
  start: number;
  publishEnd: number;
  drained: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function api(server: Child, method: string, route: string, token: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${server.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${method} ${route} failed: ${response.status} ${await response.text()}`);
  return response.status === 204 ? undefined : response.json();
}

/** Waits until `done` answers true, polling the database; an error naming `what` after DRAIN_TIMEOUT_MS. */
async function until(what: string, done: () => Promise<string | true>): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const state = await done();
    if (state === true) return;
    if (Date.now() > deadline) throw new Error(`webhook bench: ${what} not done within ${DRAIN_TIMEOUT_MS / 1000} s (${state})`);
    await sleep(POLL_MS);
  }
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export interface WebhookPart {
  /** A server started with loopback allowed for webhooks (--repoadmin_webhook_allow_networks). */
  server: Child;
  receiver: Child;
  jwt: string;
  /** The server's database, to see when the sender is done and when each event was committed. */
  pool: pg.Pool;
  publish: HttpRequest;
  load: Omit<LoadOptions, 'connections'>;
  progress: (line: string) => void;
}

/** One webhook at one concurrency: turns without and with it, then what was delivered, how fast and how late. */
export async function measureWebhook(part: WebhookPart, connections: number): Promise<WebhookRow> {
  const { server, jwt, pool } = part;
  const started = performance.now();
  const hook = (await api(server, 'POST', '/v1/webhooks', jwt, {
    url: `${part.receiver.url}/hook`,
    events: PUBLISH_EVENTS,
    description: `bench, c=${connections}`,
    active: false,
  })) as { id: string };
  const setActive = (active: boolean) => api(server, 'PATCH', `/v1/webhooks/${hook.id}`, jwt, { active });
  // Every committed event numbered (and so given its deliveries, or none) under the state it was committed in.
  const numbered = async (): Promise<string | true> => {
    const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from events where seq is null');
    return rows[0]!.n === 0 || `${rows[0]!.n} events not yet numbered`;
  };
  const drained = async (): Promise<string | true> => {
    const { rows } = await pool.query<{ unnumbered: number; pending: number }>(
      `select (select count(*) from events where seq is null)::int as unnumbered,
              (select count(*) from deliveries where webhook_id = $1 and status = 'pending')::int as pending`,
      [hook.id],
    );
    const { unnumbered, pending } = rows[0]!;
    return (unnumbered === 0 && pending === 0) || `${unnumbered} events not yet numbered, ${pending} deliveries pending`;
  };

  const windows: Window[] = [];
  const cpuMs = () => cpuMsOf(server.pid);
  const withHook = {
    baseUrl: server.url,
    request: part.publish,
    cpuMs,
    before: async (counted: boolean) => {
      await sleep(SETTLE_MS);
      await until('numbering the events of the turn without the webhook', numbered);
      await setActive(true);
      windows.push({ counted, start: Date.now(), publishEnd: NaN, drained: NaN });
    },
  };
  const withoutHook = {
    baseUrl: server.url,
    request: part.publish,
    cpuMs,
    before: async () => {
      const window = windows.at(-1)!;
      window.publishEnd = Date.now();
      await sleep(SETTLE_MS);
      await until('draining the deliveries of the turn with the webhook', drained);
      window.drained = Date.now();
      await setActive(false);
    },
  };
  const [withMeasured, withoutMeasured] = await loadTurns([withHook, withoutHook], { ...part.load, connections });

  // What the turns with the webhook committed, by the events' own time: the gaps between turns are quiet.
  let events = 0;
  let published = 0;
  for (const w of windows) {
    const { rows } = await pool.query<{ type: string; n: number }>(
      `select type, count(*)::int as n from events
       where created_at >= to_timestamp($1::float8 / 1000) and created_at <= to_timestamp($2::float8 / 1000) and type = any($3)
       group by type`,
      [w.start, w.drained, PUBLISH_EVENTS],
    );
    for (const row of rows) {
      events += row.n;
      if (row.type === 'version.published') published += row.n;
    }
  }
  // Each delivery with its event's commit time: created_at is the publish statement's transaction
  // start (now(3)), a statement's duration at most before its commit.
  const { rows: stored } = await pool.query<{ id: string; status: string; committed: number }>(
    `select d.id, d.status, extract(epoch from e.created_at)::float8 * 1000 as committed
     from deliveries d join events e on e.id = d.event_id where d.webhook_id = $1`,
    [hook.id],
  );
  const arrivals = (await (await fetch(`${part.receiver.url}/received`)).json()) as [string, number][];
  const ids = new Set(stored.map((d) => d.id));
  const first = new Map<string, number>();
  let requests = 0;
  for (const [id, at] of arrivals) {
    if (!ids.has(id)) continue;
    requests++;
    if (!first.has(id)) first.set(id, at);
  }

  const counted = windows.filter((w) => w.counted);
  const inside = (at: number, from: number, to: number) => at >= from && at <= to;
  const arrived = [...first.values()];
  const count = (pick: (w: Window) => [number, number]) =>
    arrived.filter((at) => counted.some((w) => inside(at, ...pick(w)))).length;
  const seconds = (pick: (w: Window) => [number, number]) => counted.reduce((sum, w) => sum + (pick(w)[1] - pick(w)[0]) / 1000, 0);
  const publishing = (w: Window): [number, number] => [w.start, w.publishEnd];
  const toDrained = (w: Window): [number, number] => [w.start, w.drained];
  const lags = stored
    .filter((d) => first.has(d.id) && counted.some((w) => inside(d.committed, w.start, w.drained)))
    .map((d) => first.get(d.id)! - d.committed)
    .sort((a, b) => a - b);

  const row: WebhookRow = {
    connections,
    without: withoutMeasured!,
    with: withMeasured!,
    events,
    published,
    deliveries: stored.length,
    delivered: stored.filter((d) => d.status === 'delivered').length,
    received: first.size,
    requests,
    whilePublishing: count(publishing) / seconds(publishing),
    untilDrained: count(toDrained) / seconds(toDrained),
    drainSeconds: counted.reduce((sum, w) => sum + (w.drained - w.publishEnd) / 1000, 0),
    lagP50Ms: percentile(lags, 50),
    lagP99Ms: percentile(lags, 99),
    seconds: (performance.now() - started) / 1000,
  };
  part.progress(
    `PostgreSQL publish c=${connections} without a webhook ${Math.round(row.without.perSecond)}/s, with one ${Math.round(row.with.perSecond)}/s ` +
      `(cores busy ${busy(row.without)} and ${busy(row.with)}); ` +
      `${row.delivered} of ${row.events} events delivered (${row.received} received, ${row.requests} requests), ` +
      `${Math.round(row.whilePublishing)}/s while publishing, ${Math.round(row.untilDrained)}/s until drained (${row.drainSeconds.toFixed(1)} s draining); ` +
      `lag p50 ${row.lagP50Ms.toFixed(0)} ms, p99 ${row.lagP99Ms.toFixed(0)} ms; ${row.seconds.toFixed(0)} s in all`,
  );
  return row;
}
