// The benchmark's Markdown report: the table of every measurement beside its limits, the targets of
// each round, publishing with a webhook, the trash, memory, seeding times and the query plans.
import type { Plan } from './explain.js';
import type { Measurement } from './load.js';
import type { ScenarioId } from './scenarios.js';
import type { SeedTiming } from './seed.js';
import { type TrashComparison, trashTable } from './trash.js';
import type { WebhookRow } from './webhooks.js';
import type { DrainRound } from './outbox-drain.js';

export type DatabaseName = 'PostgreSQL' | 'PGlite' | 'MariaDB';

export interface Row {
  database: DatabaseName;
  scenario: ScenarioId;
  name: string;
  connections: number;
  server: Measurement;
  /** The same SQL straight to the database, at the same concurrency. */
  direct: Measurement;
  /** The empty Koa route. */
  floor: Measurement;
}

export interface DatabaseRun {
  database: DatabaseName;
  records: number;
  seed: SeedTiming;
  plans: Plan[];
  /** Server RSS in bytes: after start-up, highest under load, after the load. */
  memory: { rest: number; peak: number; after: number };
}

/** The server with one worker and with two, beside the hardest limit, measured in turns (run.ts). */
export interface LimitRow {
  scenario: ScenarioId;
  name: string;
  connections: number;
  server: Measurement;
  workers: Measurement;
  /** A minimal node:http + pg server, or for publishing also the statement straight through pg. */
  limit: Measurement;
  limitName: string;
  /** pgbench on the same SQL, the database's own limit. */
  pgbench?: { perSecond: number; meanMs: number };
}

/** The embedded database's memory and start-up (run.ts, embeddedMemory). */
export interface Embedded {
  /** Milliseconds from spawning the server to its "listening" line: first start (with initdb), a later one. */
  firstStartMs: number;
  laterStartMs: number;
  /** RSS after the first start, after 1,000 publishes on it, on a later start. */
  rssFirstStart: number;
  rssAfterPublishes: number;
  publishes: number;
}

export interface Report {
  started: Date;
  environment: string[];
  runs: DatabaseRun[];
  rows: Row[];
  limits?: LimitRow[];
  embedded?: Embedded;
  /** Publishing with one webhook and without, per concurrency (webhooks.ts). */
  webhooks?: WebhookRow[];
  /** The reads with and without records in the trash (trash.ts). */
  trash?: TrashComparison;
  /** The webhook sender draining a backlog, each round beside bare signed POSTs (outbox-drain.ts). */
  drain?: DrainRound[];
}

const MB = 1024 * 1024;

function rate(m: Measurement): string {
  return Math.round(m.perSecond).toLocaleString('en');
}

function ms(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : '-';
}

function cpu(m: Measurement): string {
  return m.cpuMsPerRequest !== undefined ? String(Math.round(m.cpuMsPerRequest * 1000)) : '-';
}

function machineCpu(m: Measurement): string {
  return m.machineCpuMsPerRequest !== undefined ? String(Math.round(m.machineCpuMsPerRequest * 1000)) : '-';
}

/** The share of the machine's cores busy during a measurement's turns, or '-'. */
export function busy(m: Measurement): string {
  return m.machineBusy !== undefined ? `${Math.round(m.machineBusy * 100)}%` : '-';
}

function ratio(server: Measurement, limit: Measurement): string {
  return limit.perSecond > 0 ? `${Math.round((server.perSecond / limit.perSecond) * 100)}%` : '-';
}

export function resultsTable(rows: Row[]): string {
  const lines = [
    '| database | request | c | server req/s | p50 ms | p99 ms | SQL req/s | p50 ms | p99 ms | server/SQL | Koa floor req/s | p50 ms | p99 ms | server/floor |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.database} | ${r.name} | ${r.connections} | ${rate(r.server)} | ${ms(r.server.p50Ms)} | ${ms(r.server.p99Ms)} | ` +
        `${rate(r.direct)} | ${ms(r.direct.p50Ms)} | ${ms(r.direct.p99Ms)} | ${ratio(r.server, r.direct)} | ` +
        `${rate(r.floor)} | ${ms(r.floor.p50Ms)} | ${ms(r.floor.p99Ms)} | ${ratio(r.server, r.floor)} |`,
    );
  }
  return lines.join('\n');
}

interface Target {
  what: string;
  goal: string;
  reached: string;
  met: boolean | undefined;
}

/** The targets of issue 7, for PostgreSQL at concurrency 16. */
export function targets(rows: Row[], runs: DatabaseRun[]): Target[] {
  const at16 = (scenario: ScenarioId) =>
    rows.find((r) => r.database === 'PostgreSQL' && r.scenario === scenario && r.connections === 16);
  const result: Target[] = [];
  const p99 = (scenario: ScenarioId, what: string, limit: number) => {
    const row = at16(scenario);
    result.push({
      what: `${what}, p99 at c=16`,
      goal: `< ${limit} ms`,
      reached: row ? `${ms(row.server.p99Ms)} ms` : 'not measured',
      met: row ? row.server.p99Ms < limit : undefined,
    });
  };
  p99('latest', 'latest lookup', 20);
  p99('search-group', 'search by group and artifact', 20);
  p99('search-branch', 'branch-wide sorted page', 100);
  for (const scenario of ['search-group', 'latest', 'search-branch'] as const) {
    const row = at16(scenario);
    result.push({
      what: `${row?.name ?? scenario}: server/SQL throughput at c=16`,
      goal: '>= 50%',
      reached: row ? ratio(row.server, row.direct) : 'not measured',
      met: row ? row.server.perSecond >= row.direct.perSecond / 2 : undefined,
    });
  }
  const publish = at16('publish');
  result.push({
    what: 'publish at c=16',
    goal: '>= 1,000/s',
    reached: publish ? `${rate(publish.server)}/s` : 'not measured',
    met: publish ? publish.server.perSecond >= 1000 : undefined,
  });
  const at1 = (scenario: ScenarioId) => rows.find((r) => r.database === 'PostgreSQL' && r.scenario === scenario && r.connections === 1);
  const [withToken, withJwt] = [at1('publish-token'), at1('publish')];
  result.push({
    what: 'publish with a project token vs a session JWT, p50 at c=1',
    goal: 'no more (within 5%, the noise of one run)',
    reached: withToken && withJwt ? `${ms(withToken.server.p50Ms)} ms vs ${ms(withJwt.server.p50Ms)} ms` : 'not measured',
    met: withToken && withJwt ? withToken.server.p50Ms <= withJwt.server.p50Ms * 1.05 : undefined,
  });
  const pg = runs.find((r) => r.database === 'PostgreSQL');
  result.push({
    what: 'server RSS under load',
    goal: '< 200 MB',
    reached: pg ? `${Math.round(pg.memory.peak / MB)} MB` : 'not measured',
    met: pg ? pg.memory.peak < 200 * MB : undefined,
  });
  return result;
}

/** The targets of issue 15: reads and publishing against their hardest limits, the embedded database's memory. */
export function round2Targets(report: Report): Target[] {
  const result: Target[] = [];
  // Publishing has two limits (run.ts): the first, the statement straight through pg, is the issue's.
  const limit = (scenario: ScenarioId, limitName?: string) =>
    report.limits?.find((r) => r.scenario === scenario && (limitName === undefined || r.limitName === limitName));
  // The long history (issue 23): one artifact with 20,000 versions on one branch reads as fast as any.
  const goals = [['latest', 0.8], ['search-group', 0.8], ['latest-long', 0.8], ['search-long', 0.8], ['publish', 0.75]] as const;
  for (const [scenario, goal] of goals) {
    const row = limit(scenario);
    result.push({
      what: `${row?.name ?? scenario}: server (1 worker) / ${row?.limitName ?? 'limit'} at c=16`,
      goal: `>= ${goal * 100}%`,
      reached: row ? `${ratio(row.server, row.limit)} (${rate(row.server)}/s vs ${rate(row.limit)}/s)` : 'not measured',
      met: row ? row.server.perSecond >= row.limit.perSecond * goal : undefined,
    });
  }
  // The reading of the publish target that counts HTTP on both sides (results notes, "Disagreement").
  const overHttp = limit('publish', 'node:http + pg');
  if (overHttp) {
    result.push({
      what: `${overHttp.name}: server (1 worker) / the same statement over node:http + pg at c=16 (proposed reading)`,
      goal: '>= 75%',
      reached: `${ratio(overHttp.server, overHttp.limit)} (${rate(overHttp.server)}/s vs ${rate(overHttp.limit)}/s)`,
      met: overHttp.server.perSecond >= overHttp.limit.perSecond * 0.75,
    });
  }
  for (const scenario of ['latest', 'search-group', 'latest-long', 'search-long'] as const) {
    const row = limit(scenario);
    result.push({
      what: `${row?.name ?? scenario}: p99 at c=16 (1 worker, turns)`,
      goal: '< 20 ms',
      reached: row ? `${ms(row.server.p99Ms)} ms` : 'not measured',
      met: row ? row.server.p99Ms < 20 : undefined,
    });
  }
  const e = report.embedded;
  result.push({
    what: `PGlite RSS after the first start and ${e?.publishes.toLocaleString('en') ?? '1,000'} publishes`,
    goal: '<= 200 MB',
    reached: e ? `${Math.round(e.rssAfterPublishes / MB)} MB` : 'not measured',
    met: e ? e.rssAfterPublishes <= 200 * MB : undefined,
  });
  const lite = report.runs.find((r) => r.database === 'PGlite');
  result.push({
    what: `PGlite RSS under load at ${lite?.records.toLocaleString('en') ?? '100,000'} records`,
    goal: '<= 300 MB',
    reached: lite ? `${Math.round(lite.memory.peak / MB)} MB` : 'not measured',
    met: lite ? lite.memory.peak <= 300 * MB : undefined,
  });
  return result;
}

/** Publishing with a webhook may cost at most this share of publishing without (issue 24). */
const WEBHOOK_GOAL = 0.9;
/** Reads with the trash are "not slower" (issue 25) within the noise of one run, as for the token above. */
const TRASH_GOAL = 1.05;

/** The targets of round 3: publishing with one webhook (issue 24), reads with a full trash (issue 25). */
export function round3Targets(report: Report): Target[] {
  const result: Target[] = [];
  for (const row of report.webhooks ?? []) {
    result.push({
      what: `publish at c=${row.connections} with one webhook / without (same server, turns of one second)`,
      goal: `>= ${WEBHOOK_GOAL * 100}%`,
      reached: `${ratio(row.with, row.without)} (${rate(row.with)}/s vs ${rate(row.without)}/s)`,
      met: row.with.perSecond >= row.without.perSecond * WEBHOOK_GOAL,
    });
    result.push({
      what: `c=${row.connections}: every event committed while the webhook was active delivered, each received once`,
      goal: 'delivered = received = events',
      reached: `${row.delivered.toLocaleString('en')} delivered, ${row.received.toLocaleString('en')} received in ${row.requests.toLocaleString('en')} requests, of ${row.events.toLocaleString('en')} events`,
      met: webhookComplete(row),
    });
  }
  if (report.webhooks === undefined) result.push({ what: 'publish with one webhook / without', goal: `>= ${WEBHOOK_GOAL * 100}%`, reached: 'not measured', met: undefined });
  const trash = report.trash;
  for (const row of trash?.rows ?? []) {
    result.push({
      what:
        `${row.name}: with ${trash!.trashed.toLocaleString('en')} records in the trash / after the same deletes without a trash, median of the blocks ` +
        `(beside it: after the deletes / seeded without deletes, what any delete costs)`,
      goal: `<= ${Math.round(TRASH_GOAL * 100)}% (not slower)`,
      reached:
        `${Math.round(row.trashRatio * 100)}% (${row.trashMs.toFixed(3)} ms vs ${row.deletedMs.toFixed(3)} ms; shared buffers ${row.buffers[2]} vs ${row.buffers[1]}); ` +
        `deletes: ${Math.round(row.deletedRatio * 100)}% (${row.deletedMs.toFixed(3)} ms vs ${row.seededMs.toFixed(3)} ms)`,
      met: row.trashRatio <= TRASH_GOAL,
    });
  }
  if (!trash) {
    result.push({
      what: 'search and latest with 100,000 records in the trash / after the same deletes without a trash',
      goal: `<= ${Math.round(TRASH_GOAL * 100)}%`,
      reached: 'not measured',
      met: undefined,
    });
  }
  return result;
}

/** The limit of a bare server publishing the record alone, without the caller's check or the audit entry. */
export const RECORD_ALONE = 'node:http + pg, record alone';

/**
 * The targets of round 4 (issue 41), against the right floor: reads and publishing against the bare
 * `node:http` + `pg` server with the same SQL, the webhook sender's CPU per delivery against a bare
 * signed POST.
 */
export function round4Targets(report: Report): Target[] {
  const result: Target[] = [];
  const goals = [['latest', 0.85], ['search-group', 0.85], ['publish', 0.9]] as const;
  for (const [scenario, goal] of goals) {
    const row = report.limits?.find((r) => r.scenario === scenario && r.limitName === 'node:http + pg');
    result.push({
      what: `${row?.name ?? scenario}: server (1 worker) / node:http + pg at c=16, in turns (answers a second; CPU µs per answer of each)`,
      goal: `>= ${goal * 100}%`,
      reached: row ? `${ratio(row.server, row.limit)} (${rate(row.server)}/s vs ${rate(row.limit)}/s; ${cpu(row.server)} vs ${cpu(row.limit)} µs)` : 'not measured',
      met: row ? row.server.perSecond >= row.limit.perSecond * goal : undefined,
    });
  }
  // Beside the publish target, what the server reaches against the earlier floor: the record alone.
  const alone = report.limits?.find((r) => r.scenario === 'publish' && r.limitName === RECORD_ALONE);
  if (alone) {
    result.push({
      what: `${alone.name}: server (1 worker) / ${RECORD_ALONE} (no check, no audit entry) at c=16, in turns: for comparison`,
      goal: '-',
      reached: `${ratio(alone.server, alone.limit)} (${rate(alone.server)}/s vs ${rate(alone.limit)}/s; ${cpu(alone.server)} vs ${cpu(alone.limit)} µs)`,
      met: undefined,
    });
  }
  // The rounds after the first (the sender's and the floor's warm-up).
  const warm = report.drain?.slice(1) ?? [];
  const sender = warm.reduce((sum, r) => sum + r.senderUs, 0) / warm.length;
  const bare = warm.reduce((sum, r) => sum + r.bareUs, 0) / warm.length;
  result.push({
    what: 'webhook sender: CPU per delivery / a bare signed node:http POST at the same concurrency (rounds 2 and 3)',
    goal: '<= 2x',
    reached: warm.length ? `${(sender / bare).toFixed(2)}x (${Math.round(sender)} vs ${Math.round(bare)} µs)` : 'not measured',
    met: warm.length ? sender <= 2 * bare : undefined,
  });
  return result;
}

const webhookComplete = (row: WebhookRow) => row.delivered === row.events && row.received === row.events && row.requests === row.received;

/** Table rows comparing a publishing step with a project token, a session JWT, and a password login first. */
export function pipelineSteps(rows: Row[]): string[] {
  const out: string[] = [];
  for (const database of ['PostgreSQL', 'PGlite'] as const) {
    const at1 = (scenario: ScenarioId) => rows.find((r) => r.database === database && r.scenario === scenario && r.connections === 1)?.server;
    const [token, jwt, login] = [at1('publish-token'), at1('publish'), at1('login')];
    if (token) out.push(`| ${database} | publish with a project token | ${ms(token.p50Ms)} | ${ms(token.p99Ms)} |`);
    if (jwt) out.push(`| ${database} | publish with a session JWT | ${ms(jwt.p50Ms)} | ${ms(jwt.p99Ms)} |`);
    if (login) out.push(`| ${database} | log in with a password | ${ms(login.p50Ms)} | ${ms(login.p99Ms)} |`);
    if (login && jwt) out.push(`| ${database} | log in with a password, then publish | ${ms(login.p50Ms + jwt.p50Ms)} | - |`);
  }
  return out;
}

export function problems(report: Report): string[] {
  const found: string[] = [];
  for (const run of report.runs) {
    for (const plan of run.plans) {
      if (plan.seqScan) found.push(`${run.database}: the ${plan.label} query of "${plan.scenario}" scans the versions table sequentially`);
    }
  }
  for (const row of report.limits ?? []) {
    for (const [what, m] of [['1 worker', row.server], ['2 workers', row.workers], [row.limitName, row.limit]] as const) {
      if (m.errors > 0) found.push(`PostgreSQL ${row.name} c=${row.connections} ${what}: ${m.errors} failed requests (first: ${m.firstError})`);
    }
  }
  for (const row of report.webhooks ?? []) {
    for (const [what, m] of [['without a webhook', row.without], ['with a webhook', row.with]] as const) {
      if (m.errors > 0) found.push(`PostgreSQL publish c=${row.connections} ${what}: ${m.errors} failed requests (first: ${m.firstError})`);
    }
    if (!webhookComplete(row)) {
      found.push(
        `PostgreSQL webhook c=${row.connections}: ${row.events} events, ${row.deliveries} deliveries queued, ${row.delivered} delivered, ` +
          `${row.received} received in ${row.requests} requests`,
      );
    }
  }
  for (const row of report.rows) {
    for (const [what, m] of [['server', row.server], ['SQL', row.direct], ['Koa floor', row.floor]] as const) {
      if (m.errors > 0) {
        found.push(`${row.database} ${row.name} c=${row.connections} ${what}: ${m.errors} failed requests (first: ${m.firstError})`);
      }
    }
  }
  return found;
}

/** The whole report; without `plans` for the terminal, where they were printed as they ran. */
export function markdown(report: Report, options: { plans: boolean } = { plans: true }): string {
  const out: string[] = [];
  out.push(`# Benchmark ${report.started.toISOString().slice(0, 16).replace('T', ' ')} UTC`, '');
  out.push(...report.environment.map((line) => `- ${line}`), '');
  out.push(
    'Each figure: 10-second runs after a warm-up (unless the options above say otherwise). "SQL" is the same SQL the',
    'server runs for that request (built by its own query functions), sent straight to the database at the same',
    'concurrency; for publishing it is the server\'s publish transaction without HTTP. "Koa floor" is an empty Koa',
    'route in its own process. The ratios are server throughput over each limit.',
    '',
  );
  out.push(resultsTable(report.rows), '');

  out.push('## Targets (PostgreSQL, c=16)', '', '| target | goal | reached | met |', '|---|---|---|---|');
  for (const t of targets(report.rows, report.runs)) {
    out.push(`| ${t.what} | ${t.goal} | ${t.reached} | ${t.met === undefined ? '-' : t.met ? 'yes' : 'no'} |`);
  }
  out.push('');

  if (report.limits?.length) {
    out.push(
      '## Against the hardest limits (PostgreSQL, c=16, in turns of one second)',
      '',
      'The server with one worker and with two (`--workers 2`), and the limit, take turns of one second each for the',
      'whole measurement, so all see the same machine, after a warm-up of at least 6 s each (the ones started for it start cold). Reads: a minimal `node:http` + `pg` server with named prepared',
      'statements answering the same SQL (bench/minimal.ts), and pgbench (`-M prepared`, same SQL, same concurrency)',
      'as the database\'s own limit. Publishing: the same statement (the caller\'s check, the record, the request\'s',
      'audit entry) straight through a `pg` pool, the minimal server publishing with that statement over HTTP (reading',
      'the session token\'s claims, verifying no signature), and the minimal server publishing the record alone (no',
      `check, no entry: "${RECORD_ALONE}", the floor of the runs before the entry went into the statement), in the same turns.`,
      '',
      'CPU µs/req: CPU time (user + system) of that server process, and its workers, per answer during its turns.',
      '',
      '| request | 1 worker req/s | p50 ms | p99 ms | CPU µs/req | 2 workers req/s | p50 ms | p99 ms | CPU µs/req | limit | req/s | p50 ms | p99 ms | CPU µs/req | 1 worker/limit | 2 workers/limit | pgbench tps |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|',
      ...report.limits.map(
        (r) =>
          `| ${r.name} | ${rate(r.server)} | ${ms(r.server.p50Ms)} | ${ms(r.server.p99Ms)} | ${cpu(r.server)} | ${rate(r.workers)} | ${ms(r.workers.p50Ms)} | ${ms(r.workers.p99Ms)} | ${cpu(r.workers)} | ` +
          `${r.limitName} | ${rate(r.limit)} | ${ms(r.limit.p50Ms)} | ${ms(r.limit.p99Ms)} | ${cpu(r.limit)} | ${ratio(r.server, r.limit)} | ${ratio(r.workers, r.limit)} | ` +
          `${r.pgbench ? Math.round(r.pgbench.perSecond).toLocaleString('en') : '-'} |`,
      ),
      '',
    );
  }
  if (report.embedded) {
    const e = report.embedded;
    out.push(
      '## Embedded database (PGlite): start-up and memory',
      '',
      `A server on a new data folder: first start (initdb in a child process), ${e.publishes.toLocaleString('en')} publishes, stopped, started again.`,
      '',
      '| first start ms | RSS after first start | RSS after the publishes | later start ms |',
      '|--:|--:|--:|--:|',
      `| ${Math.round(e.firstStartMs)} | ${Math.round(e.rssFirstStart / MB)} MB | ${Math.round(e.rssAfterPublishes / MB)} MB | ${Math.round(e.laterStartMs)} |`,
      '',
    );
  }
  out.push('## Targets of round 2', '', '| target | goal | reached | met |', '|---|---|---|---|');
  for (const t of round2Targets(report)) {
    out.push(`| ${t.what} | ${t.goal} | ${t.reached} | ${t.met === undefined ? '-' : t.met ? 'yes' : 'no'} |`);
  }
  out.push('');

  if (report.webhooks?.length) {
    out.push(
      '## Publishing with one webhook (PostgreSQL, in turns of one second)',
      '',
      'One server, allowed to reach loopback addresses (`REPO_MAN_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8`), publishing in',
      'turns of one second: with one webhook active (created through the API, subscribed to `version.published` and',
      '`latest.moved`, pointing at a receiver in its own process on 127.0.0.1 that answers 200 at once, bench/receiver.ts),',
      'then with it inactive, i.e. with no webhook to deliver to. After each turn with the webhook the sender drains what',
      'the turn queued before the next turn starts, so that no turn without it shares the machine with a sender at work;',
      'the drain is outside both measurements. CPU µs/publish: the server process during its turns, the sender included;',
      'machine: every process on the machine during those turns (server, PostgreSQL, the load generator, the receiver),',
      'and the share of all cores busy meanwhile. Where both turns keep the cores busy, the ratio of publishes is about the',
      'inverse ratio of machine CPU per publish: what a delivery costs in all processes, not where the sender runs.',
      '',
      'Deliveries/s: deliveries arriving at the receiver during the measured turns with the webhook ("while publishing"),',
      'and from the start of each such turn until the sender had delivered all it queued ("until drained"). Lag: from',
      'the event\'s commit to the delivery\'s arrival at the receiver, for the events of the measured turns. The commit',
      'time is the event row\'s `created_at`, written by the trigger in the publish\'s own transaction with PostgreSQL\'s',
      'clock (transaction start, at most a statement\'s duration before the commit), against the receiver\'s wall clock',
      'on the same machine. The `webhook-timestamp` header cannot stand for it: it is stamped in whole seconds when each',
      'attempt is sent, not when the event was committed. The lag includes the wait in the queue behind the deliveries',
      'of the same turn, so it grows with the turn whenever publishing outruns the sender.',
      '',
      'Events while active: the events the turns with the webhook committed (warm-up included), by their `created_at`;',
      'of them `version.published`, one per committed publish. Delivered: the deliveries the database records as',
      'delivered; received: the distinct `webhook-id`s at the receiver, and in brackets the requests that brought them.',
      '',
      '| c | publish without req/s | with req/s | with/without | CPU µs/publish without | with | machine CPU µs/publish without | with | cores busy without | with | events while active | of them version.published | delivered | received (requests) | deliveries/s while publishing | until drained | draining s | lag p50 ms | lag p99 ms | section s |',
      '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
      ...report.webhooks.map(
        (r) =>
          `| ${r.connections} | ${rate(r.without)} | ${rate(r.with)} | ${ratio(r.with, r.without)} | ${cpu(r.without)} | ${cpu(r.with)} | ` +
          `${machineCpu(r.without)} | ${machineCpu(r.with)} | ${busy(r.without)} | ${busy(r.with)} | ` +
          `${r.events.toLocaleString('en')} | ${r.published.toLocaleString('en')} | ${r.delivered.toLocaleString('en')} | ${r.received.toLocaleString('en')} (${r.requests.toLocaleString('en')}) | ` +
          `${Math.round(r.whilePublishing).toLocaleString('en')} | ${Math.round(r.untilDrained).toLocaleString('en')} | ${r.drainSeconds.toFixed(1)} | ${r.lagP50Ms.toFixed(0)} | ${r.lagP99Ms.toFixed(0)} | ${r.seconds.toFixed(0)} |`,
      ),
      '',
    );
  }
  if (report.trash) {
    const t = report.trash;
    out.push(
      '## The trash (PostgreSQL, the server\'s SQL)',
      '',
      `Three databases with the same number of live records: the seeded one (${t.live[0].toLocaleString('en')} live records, no deletes);`,
      `one seeded with ${t.deleted.toLocaleString('en')} more records, of which ${t.deleted.toLocaleString('en')} were then deleted without a trash`,
      `(never a key's latest, nor a version of the long history): ${t.live[1].toLocaleString('en')} live records;`,
      `and a file copy of that one made before the delete, from which the same records were moved to \`versions_trash\` as a delete`,
      `moves them: ${t.live[2].toLocaleString('en')} live records, ${t.trashed.toLocaleString('en')} in the trash. Both then \`VACUUM ANALYZE\`.`,
      'Trash / same deletes without compares what the issue asks about, the records in the trash; after the deletes / no deletes',
      'is what deleting that many records costs the reads, trash or not (the space their rows and the rewritten counts leave behind).',
      `Each request's statements on the three in turns, ${t.rounds.toLocaleString('en')} times in ${t.blocks} blocks, each block on a new session of each`,
      'of the three, the statements one after the other (bench/trash.ts): the milliseconds are medians of all rounds, the ratios the',
      'median of the blocks\' ratios (each block\'s beside it: one session\'s own speed sways a block by several percent either way). The shared buffers are what one request\'s',
      'statements touch on each database (`EXPLAIN (ANALYZE, BUFFERS)`): the pages read, whatever the clock says.',
      `Making the two databases with the deletes took ${t.seedSeconds.toFixed(0)} s, the timing ${t.seconds.toFixed(0)} s.`,
      '',
      trashTable(t),
      '',
    );
  }
  out.push('## Targets of round 3', '', '| target | goal | reached | met |', '|---|---|---|---|');
  for (const t of round3Targets(report)) {
    out.push(`| ${t.what} | ${t.goal} | ${t.reached} | ${t.met === undefined ? '-' : t.met ? 'yes' : 'no'} |`);
  }
  out.push('');

  out.push('## Targets of round 4: against the right floor', '', '| target | goal | reached | met |', '|---|---|---|---|');
  for (const t of round4Targets(report)) {
    out.push(`| ${t.what} | ${t.goal} | ${t.reached} | ${t.met === undefined ? '-' : t.met ? 'yes' : 'no'} |`);
  }
  out.push('');
  if (report.drain?.length) {
    out.push(
      '## The webhook sender against a bare POST (PostgreSQL)',
      '',
      '`bench/outbox-drain.ts`: a backlog of deliveries for one webhook, all due at once, drained by the built server',
      '(`bin/repoadmin server`, its own process) to the receiver (bench/receiver.ts, its own process); then, from the',
      'benchmark\'s process, as many POSTs of the same body with the same headers and signature from a bare `node:http`',
      'keep-alive agent, as many at a time as the sender has in flight for one webhook (2). CPU µs per delivery: the',
      'server process (user + system) over the drain, and the benchmark\'s over the bare POSTs; the database\'s processes',
      'for its database and the receiver over the drain. The first round warms both up.',
      '',
      '| round | deliveries | sender deliveries/s | sender CPU µs | PostgreSQL CPU µs | receiver CPU µs | at a time | bare POSTs/s | bare CPU µs | sender/bare |',
      '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
      ...report.drain.map(
        (r) =>
          `| ${r.round} | ${r.deliveries.toLocaleString('en')} | ${Math.round(r.perSecond).toLocaleString('en')} | ${Math.round(r.senderUs)} | ${r.databaseUs === undefined ? '-' : Math.round(r.databaseUs)} | ` +
          `${Math.round(r.receiverUs)} | ${r.concurrency} | ${Math.round(r.barePerSecond).toLocaleString('en')} | ${Math.round(r.bareUs)} | ${(r.senderUs / r.bareUs).toFixed(2)} |`,
      ),
      '',
    );
  }

  const steps = pipelineSteps(report.rows);
  if (steps.length > 0) {
    out.push(
      '## A pipeline step (c=1)',
      '',
      'Server time of one step that publishes: with a project token it is one request; with a password it is a',
      'login (generate-token, one bcrypt comparison at the default cost 12) and then the publish.',
      '',
      '| database | step | server p50 ms | p99 ms |',
      '|---|---|--:|--:|',
      ...steps,
      '',
    );
  }

  out.push('## Seeding and memory', '', '| database | records | insert s | indexes s | VACUUM ANALYZE (MariaDB: ANALYZE TABLE) s | total s | server RSS at rest | peak under load | after load |', '|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const run of report.runs) {
    const s = run.seed;
    const mb = (bytes: number) => `${Math.round(bytes / MB)} MB`;
    out.push(
      `| ${run.database} | ${run.records.toLocaleString('en')} | ${s.insertSeconds.toFixed(1)} | ${s.indexSeconds.toFixed(1)} | ` +
        `${s.vacuumSeconds.toFixed(1)} | ${s.totalSeconds.toFixed(1)} | ${mb(run.memory.rest)} | ${mb(run.memory.peak)} | ${mb(run.memory.after)} |`,
    );
  }
  out.push('');

  const found = problems(report);
  out.push('## Problems', '', ...(found.length ? found.map((p) => `- ${p}`) : ['None: no sequential scan of versions, no failed request.']), '');

  if (!options.plans) return out.join('\n');
  out.push('## Query plans', '');
  for (const run of report.runs) {
    for (const plan of run.plans) {
      out.push(`### ${run.database}: ${plan.scenario}, ${plan.label} query${plan.seqScan ? ' (SEQUENTIAL SCAN)' : ''}`, '', '```', plan.text, '```', '');
    }
  }
  return out.join('\n');
}
