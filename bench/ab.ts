// `npm run bench:ab -- --base DIR`: the server built in another checkout (DIR, built there with
// `npm run build`) and this checkout's, on one seeded PostgreSQL database, taking turns of one
// second for each scenario asked, so that both see the same machine: what a change moves, measured
// side by side rather than in two runs minutes apart (on a shared host the same build's figures
// differ by a quarter between runs). Prints answers a second, p50 and p99, and the CPU each server
// process spent per answer. Not part of `npm run bench`.
// With --bare, the reads also take turns with the minimal node:http + pg server (minimal.ts) on
// the same SQL, and publishing with it as bench/run.ts's limit does, so that each build's CPU per
// answer stands beside the floor's in the same run. "machine µs/req" is every process's CPU per
// answer (the server's, PostgreSQL's, the load generator's): what a server costs its database shows there.
//   npm run bench:ab -- --base ../base [--only latest,publish (run in this order)] [--records N] [--long-history N] [--seconds S] [--connections C] [--bare] [--cpu-prof DIR]
// --long-history: the versions of the artifact with a long history (1,000; `npm run bench` has 20,000).
// --cpu-prof writes a CPU profile of the head server into DIR (node --cpu-prof) when it stops, and
// with --bare one of the minimal server into DIR/bare.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { SearchQuery, paging } from '../common/schemas/repositories.js';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';
import { KEYS } from './dataset.js';
import { loadTurns } from './load.js';
import type { Contender } from './load.js';
import { type Child, call, cpuMsOf, killChildren, startMinimal, startServer } from './processes.js';
import { type BenchAuth, type ScenarioId, scenarios } from './scenarios.js';
import { seedVersions } from './seed.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    only: { type: 'string', default: 'latest,publish' },
    records: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    'long-history': { type: 'string', default: '1000' },
    bare: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
  },
});
if (!values.base) {
  process.stderr.write('--base DIR: the checkout whose built server (dist/) is compared with this one\'s\n');
  process.exit(2);
}
const base = path.resolve(values.base);
const only = values.only!.split(',').map((s) => s.trim()) as ScenarioId[];
// In the order asked: what the servers answered before a scenario can move its figures.
const all = scenarios();
const list = only.map((id) => all.find((s) => s.id === id)).filter((s) => s !== undefined);
const records = Math.max(KEYS, Number(values.records));
const load = { connections: Number(values.connections), seconds: Number(values.seconds), warmupSeconds: Number(values.warmup) };
const pgUrl = new URL(process.env.REPOADMIN_BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
const name = `repoadmin_ab_${randomBytes(5).toString('hex')}`;
const adminPassword = `ab-${randomBytes(9).toString('base64url')}`;
const progress = (line: string) => process.stderr.write(`${line}\n`);

const admin = new pg.Client({ connectionString: pgUrl.toString() });
await admin.connect();
await admin.query(`create database ${name}`);
const children: Child[] = [];
try {
  const settings = {
    kind: 'postgres' as const, driver: 'pg', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), user: decodeURIComponent(pgUrl.username || 'postgres'),
    password: decodeURIComponent(pgUrl.password), database: name, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000, dataDir: MEMORY,
  };
  const opened = await openDatabase(settings);
  await migrateLatest(opened.db);
  await opened.close();
  const pool = new pg.Pool({ ...settings, max: 4 });
  progress(`seeding ${records.toLocaleString('en')} records into ${name}`);
  await seedVersions([pool, pool], records, Number(values['long-history']), progress);
  await pool.end();
  const env = {
    REPO_MAN_DB_JDBC: 'postgres', REPO_MAN_DB_HOST: settings.host, REPO_MAN_DB_PORT: String(settings.port), REPO_MAN_DB_USER: settings.user,
    REPO_MAN_DB_PASS: settings.password, REPO_MAN_DB_DATABASE: name, REPO_MAN_ADMIN_PASSWORD: adminPassword,
  };
  const servers = { base: await startServer({ env, root: base }), head: await startServer({ env, cpuProfileDir: values['cpu-prof'] && path.resolve(values['cpu-prof']) }) };
  children.push(servers.base, servers.head);
  const { token: jwt } = (await call(servers.head, '/v1/authentication/generate-token', { username: 'admin', password: adminPassword })) as { token: string };
  const { token: projectToken } = (await call(servers.head, '/v1/tokens', { name: 'ab', scope: 'publish' }, jwt)) as { token: string };
  const auth: BenchAuth = { jwt, projectToken };
  // The minimal server answers the reads with the statements each scenario's request runs, by what
  // tells the request apart (as bench/run.ts starts it).
  const reads = list.filter((s) => s.statements.length > 0);
  // It publishes as bench/run.ts's limit does, with the server's publish statement: the caller's check, the record, the audit entry.
  const bareAnswers = (scenario: (typeof list)[number]) => scenario.statements.length > 0 || scenario.id === 'publish';
  let bare: Child | undefined;
  if (values.bare && list.some(bareAnswers)) {
    const size = paging(SearchQuery.parse({})).size;
    const latest: Record<string, unknown> = {};
    const search: Record<string, unknown> = {};
    for (const scenario of reads) {
      const request = scenario.request(auth);
      if (request.method === 'GET') latest[new URL(request.path, 'http://localhost').search] = scenario.statements[0];
      else search[request.body as string] = { page: scenario.statements[0], count: scenario.statements[1], size, page_: 1 };
    }
    const pgUrlOf = new URL(pgUrl);
    pgUrlOf.pathname = `/${name}`;
    bare = await startMinimal({ MINIMAL_PG_URL: pgUrlOf.toString(), MINIMAL_POOL: '10', MINIMAL_STATEMENTS: JSON.stringify({ latest, search }) }, values['cpu-prof'] && path.resolve(values['cpu-prof'], 'bare'));
    children.push(bare);
  }
  process.stdout.write(`base ${base}, head ${path.resolve('.')}; ${records.toLocaleString('en')} records; c=${load.connections}, ${load.seconds} turns of 1 s each\n\n`);
  const bareHeader = bare ? ' bare req/s | CPU µs/req | machine µs/req | head CPU / bare | head/bare |' : '';
  process.stdout.write(
    `| request | base req/s | p50 ms | p99 ms | CPU µs/req | machine µs/req | head req/s | p50 ms | p99 ms | CPU µs/req | machine µs/req | head/base |${bareHeader}\n` +
      `|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|${bare ? '--:|--:|--:|--:|--:|' : ''}\n`,
  );
  for (const scenario of list) {
    const request = scenario.request(auth);
    const contenders: Contender[] = [
      { baseUrl: servers.base.url, request, cpuMs: () => cpuMsOf(servers.base.pid) },
      { baseUrl: servers.head.url, request, cpuMs: () => cpuMsOf(servers.head.pid) },
    ];
    const withBare = bare && bareAnswers(scenario);
    if (withBare) contenders.push({ baseUrl: bare!.url, request, cpuMs: () => cpuMsOf(bare!.pid) });
    const [b, h, m] = await loadTurns(contenders, load);
    const cpu = (x: typeof b) => (x!.cpuMsPerRequest === undefined ? undefined : x!.cpuMsPerRequest * 1000);
    // The whole machine's CPU per answer: the server's, its database's and the load generator's.
    const machine = (x: typeof b) => (x!.machineCpuMsPerRequest === undefined ? '-' : Math.round(x!.machineCpuMsPerRequest * 1000));
    const cells = (x: typeof b) =>
      `${Math.round(x!.perSecond).toLocaleString('en')} | ${x!.p50Ms.toFixed(2)} | ${x!.p99Ms.toFixed(2)} | ${cpu(x) === undefined ? '-' : Math.round(cpu(x)!)} | ${machine(x)}`;
    const bareCells = !bare
      ? ''
      : withBare
        ? ` ${Math.round(m!.perSecond).toLocaleString('en')} | ${Math.round(cpu(m) ?? 0)} | ${machine(m)} | ${cpu(h) && cpu(m) ? (cpu(h)! / cpu(m)!).toFixed(2) : '-'} | ${Math.round((h!.perSecond / m!.perSecond) * 100)}% |`
        : ' - | - | - | - | - |';
    process.stdout.write(`| ${scenario.name} | ${cells(b)} | ${cells(h)} | ${Math.round((h!.perSecond / b!.perSecond) * 100)}% |${bareCells}\n`);
    if (b!.errors + h!.errors + (m?.errors ?? 0) > 0) process.stdout.write(`errors: base ${b!.errors} (${b!.firstError ?? ''}), head ${h!.errors} (${h!.firstError ?? ''})${m ? `, bare ${m.errors} (${m.firstError ?? ''})` : ''}\n`);
  }
} finally {
  for (const child of children) await child.stop().catch(() => undefined);
  killChildren();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
