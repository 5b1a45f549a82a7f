// `npm run drill:failover`: the failover drill on this machine (root; Debian's patroni, etcd-server,
// etcd-client, haproxy and PostgreSQL 15). Builds the shipped topology (scripts/patroni.ts), starts
// two instances (A writes and reads on the primary; B reads from the replicas), runs publishing
// clients that read each record back through B with its position, then: kill -9 of the primary's
// postmaster, a planned switchover, a replica stopped. Writes its report to bench/results/ (named by
// the date and the drill) and removes every process and folder it made, also when it fails or runs
// over its time.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Load, type LoadFigures, percentile, startLoad, writeGap } from '../scripts/failover-load.js';
import { type Topology, startTopology } from '../scripts/patroni.js';
import { type ServerProcess, cleanEnv, freePort, startServerProcess } from '../test/helpers/process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN_PASSWORD = 'drill-admin-password';
/** The report's name after its date. */
const DRILL = 'failover';
const CLIENTS = 4;
/** How long each phase runs once the cluster is whole again. */
const SETTLE_MS = 10_000;
/** The whole drill, start to cleanup; past it, everything is stopped and the drill fails. */
const DRILL_LIMIT_MS = 15 * 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => Promise<boolean> | boolean, limitMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(200);
  }
  return Date.now() - started;
}

async function metrics(url: string, name: string): Promise<Record<string, number>> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text());
  const found: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const label = /\{(.*)\}/.exec(line)?.[1] ?? '';
    found[label] = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return found;
}

interface Event {
  name: string;
  at: number;
  /** Until the next event (or the end). */
  to?: number;
}

function report(figures: LoadFigures, events: Event[], checks: Record<string, string | number>, reads: Record<string, Record<string, number>>, startedAt: Date): string {
  const rows = Object.entries(figures.phases).map(([name, p]) => {
    const statuses = Object.entries(p.statuses)
      .map(([s, n]) => `${s === '0' ? 'no connection' : s === '-1' ? 'over 20 s' : s}: ${n}`)
      .join(', ');
    return `| ${name} | ${statuses} | ${percentile(p.publishMs, 50)} / ${percentile(p.publishMs, 99)} | ${percentile(p.readMs, 50)} / ${percentile(p.readMs, 99)} |`;
  });
  const gaps = events.filter((e) => e.to).map((e) => `| ${e.name} | ${writeGap(figures.acknowledged, e.at, e.to!)} |`);
  return `# Failover drill, ${startedAt.toISOString().slice(0, 10)}

\`npm run drill:failover\` (bench/failover.ts) on this machine (two cores, shared): the shipped topology
(deploy/patroni/: etcd, three PostgreSQL 15 nodes under Patroni 3.0 with \`synchronous_mode\`, HAProxy
with a primary and a replicas port) built from Debian's packages by scripts/patroni.ts. Instance A
writes and reads through the primary port; instance B writes through it and reads through the
replicas port. ${CLIENTS} clients publish through A (a 503 or a refused connection is tried again, as the
command line does) and read each acknowledged record back through B with the answer's
\`X-Repoadmin-Position\`. Then: kill -9 of the primary's postmaster (Patroni restarts it after crash
recovery), a planned switchover (\`patronictl switchover\`), one replica stopped.

## Outcome

| Check | Value |
|---|---|
${Object.entries(checks)
  .map(([k, v]) => `| ${k} | ${v} |`)
  .join('\n')}

## Answers and latency by phase (ms, p50 / p99; publishes through A, reads through B)

| Phase | Answers by status | Publish | Read back |
|---|---|---|---|
${rows.join('\n')}

## Write gap: the longest stretch without an acknowledged publish after each event (ms)

| Event | Write gap |
|---|---|
${gaps.join('\n')}

## Reads by target (\`repoadmin_db_reads_total\`, at the end; A's are the check after the drill, one read of each acknowledged record)

| Instance | primary | replica | fallback |
|---|---|---|---|
${Object.entries(reads)
  .map(([name, r]) => `| ${name} | ${r['target="primary"'] ?? 0} | ${r['target="replica"'] ?? 0} | ${r['target="fallback"'] ?? 0} |`)
  .join('\n')}
`;
}

async function drill(state: { topology?: Topology; servers: ServerProcess[]; load?: Load }): Promise<string> {
  const startedAt = new Date();
  console.error('building the topology (etcd, three Patroni nodes, HAProxy)...');
  const topology = (state.topology = await startTopology({ port: freePort }));
  await topology.waitHealthy(2, 180_000);
  const env = (reads: boolean) => cleanEnv({ ...topology.serverEnv({ reads }), REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn', REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD });
  state.servers.push(await startServerProcess([], env(false), 90_000));
  state.servers.push(await startServerProcess([], env(true), 90_000));
  const [a, b] = state.servers.map((s) => s.url) as [string, string];
  const login = await fetch(`${a}/v1/authentication/generate-token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };

  const load = (state.load = startLoad({ writeUrl: a, readUrl: b, token, clients: CLIENTS, project: 'drill' }));
  const events: Event[] = [];
  const mark = (name: string) => {
    const at = Date.now();
    const last = events.at(-1);
    if (last) last.to = at;
    events.push({ name, at });
    load.phase(name);
    console.error(`${new Date(at).toISOString()} ${name}`);
  };
  const recovered = async () => {
    const count = load.count();
    await until('publishes acknowledged again', () => load.count() >= count + 20, 120_000);
  };
  load.phase('before');
  await sleep(SETTLE_MS);

  const first = await topology.leader();
  mark('kill -9 of the primary postmaster');
  topology.killPostmaster(first);
  await recovered();
  await topology.waitHealthy(2, 120_000);
  await sleep(SETTLE_MS);

  mark('planned switchover');
  await topology.switchover();
  await until('a new leader', async () => (await topology.leader().catch(() => first)) !== first, 60_000);
  await recovered();
  await topology.waitHealthy(2, 120_000);
  await sleep(SETTLE_MS);

  const leader = await topology.leader();
  const replica = topology.nodes.find((n) => n !== leader)!;
  mark(`replica ${replica.name} stopped`);
  await topology.stopNode(replica);
  await sleep(SETTLE_MS);
  mark('end');
  const figures = await load.stop();

  const acknowledged = new Set(figures.acknowledged.map((x) => `${x.artifactId}:${x.version}`));
  const stored = Number(await topology.psql(topology.primaryPort, "select count(*) from versions where project_name = 'drill'", 'repoadmin'));
  const twice = Number(
    await topology.psql(
      topology.primaryPort,
      "select count(*) from (select 1 from versions where project_name = 'drill' group by group_id, artifact_id, branch, version having count(*) > 1) d",
      'repoadmin',
    ),
  );
  let missing = 0;
  for (const x of figures.acknowledged) {
    const res = await fetch(`${a}/v1/repositories/${x.uid}`, { headers: { Authorization: `Bearer ${token}` } });
    if (res.status !== 200 || ((await res.json()) as { version?: string }).version !== x.version) missing++;
  }
  const all = Object.values(figures.phases).flatMap((p) => Object.entries(p.statuses));
  const fiveHundreds = all.filter(([s]) => s === '500').reduce((n, [, c]) => n + c, 0);
  const checks = {
    'publishes acknowledged': figures.acknowledged.length,
    'acknowledged coordinates (distinct)': acknowledged.size,
    'records stored for them after the drill': stored,
    'acknowledged and present after (by uid, through A)': figures.acknowledged.length - missing,
    'duplicates (coordinates stored twice)': twice,
    '500 answers': fiveHundreds,
    'requests over 20 s (hangs)': all.filter(([s]) => s === '-1').reduce((n, [, c]) => n + c, 0),
    'stale reads by a client that sent its position': figures.staleReads.length,
  };
  const reads = { 'A (primary only)': await metrics(a, 'repoadmin_db_reads_total'), 'B (replicas port)': await metrics(b, 'repoadmin_db_reads_total') };
  const dropped = { A: await metrics(a, 'repoadmin_db_connections_dropped_total'), B: await metrics(b, 'repoadmin_db_connections_dropped_total') };
  const text = `${report(figures, events, checks, reads, startedAt)}
Connections dropped after an error that made them useless (\`repoadmin_db_connections_dropped_total\`):
A ${JSON.stringify(dropped.A)}, B ${JSON.stringify(dropped.B)}.
`;
  if (missing !== 0 || stored !== acknowledged.size || twice !== 0 || fiveHundreds !== 0 || figures.staleReads.length !== 0) {
    console.error('the drill found a problem: see the report');
    process.exitCode = 1;
  }
  return text;
}

async function main(): Promise<void> {
  const state: { topology?: Topology; servers: ServerProcess[]; load?: Load } = { servers: [] };
  const cleanup = async () => {
    await Promise.all(state.servers.map((s) => s.stop('SIGKILL')));
    await state.topology?.stop();
  };
  const watchdog = setTimeout(() => {
    console.error(`the drill ran over ${DRILL_LIMIT_MS / 60_000} minutes: stopping everything`);
    void cleanup().finally(() => process.exit(1));
  }, DRILL_LIMIT_MS);
  try {
    const text = await drill(state);
    const day = new Date().toISOString().slice(0, 10);
    const file = path.join(ROOT, 'bench', 'results', `${day}-${DRILL}.md`);
    fs.writeFileSync(file, text);
    console.log(text);
    console.error(`written: ${path.relative(ROOT, file)}`);
  } catch (error) {
    console.error(`the drill failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

await main();
