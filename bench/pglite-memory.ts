// The embedded database's memory, alone and in under a minute: `node --import tsx bench/pglite-memory.ts`
// (after `npm run build`). Three times, on a new data folder each: the built server's first start
// (initdb), 1,000 publishes four at a time, a stop and a later start; at each point the server's RSS,
// where it lies (/proc/<pid>/smaps) and the process's own view of it (bench/memory-probe.cjs).
// Prints each run and the medians. The same steps as step 4 of `npm run bench` (bench/run.ts).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { publishedRecord } from './dataset.js';
import { type Child, call, startServer } from './processes.js';

const PROBE = fileURLToPath(new URL('memory-probe.cjs', import.meta.url));
const ADMIN_PASSWORD = `bench-${randomBytes(9).toString('base64url')}`;
const MB = 1024 * 1024;
/** V8 reserves a WebAssembly memory's largest size and guard pages beyond it: many gigabytes. */
const WASM_RESERVATION = 4 * 1024 * MB;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    publishes: { type: 'string', default: '1000' },
    // Options for the server's node, to try V8 flags: --node-args '--max-semi-space-size=1'
    'node-args': { type: 'string', default: '' },
  },
});
const NODE_ARGS = values['node-args'].split(' ').filter(Boolean);
const RUNS = Number(values.runs);
const PUBLISHES = Number(values.publishes);

/** Resident memory by kind, in bytes, from /proc/<pid>/smaps. */
interface Where {
  rss: number;
  /** The WebAssembly memory's pages (PostgreSQL's heap, shared_buffers, its caches). */
  wasm: number;
  /** malloc's main arena ([heap]). */
  brk: number;
  /** Other anonymous mappings: V8's heap, compiled code (JavaScript and WebAssembly), malloc's mmaps. */
  anon: number;
  /** Mapped files: node's binary and its libraries. */
  files: number;
}

function smaps(pid: number): Where {
  const where: Where = { rss: 0, wasm: 0, brk: 0, anon: 0, files: 0 };
  const mappings: { start: number; end: number; perms: string; name: string; rss: number }[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      mappings.push({ start: parseInt(head[1]!, 16), end: parseInt(head[2]!, 16), perms: head[3]!, name: head[4]!, rss: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) mappings.at(-1)!.rss = Number(rss[1]) * 1024;
  }
  mappings.forEach((m, i) => {
    where.rss += m.rss;
    const next = mappings[i + 1];
    // The accessible part of a WebAssembly memory, followed by the rest of its reservation.
    const wasm = m.name === '' && m.perms.startsWith('rw') && next?.start === m.end && next.perms.startsWith('---') && next.end - m.start >= WASM_RESERVATION;
    if (wasm) where.wasm += m.rss;
    else if (m.name === '[heap]') where.brk += m.rss;
    else if (m.name.startsWith('/')) where.files += m.rss;
    else where.anon += m.rss;
  });
  return where;
}

/** The server's own view: process.memoryUsage() and the size of its WebAssembly memory. */
interface Probe {
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  wasm: number;
}

async function probe(server: Child, file: string): Promise<Probe> {
  rmSync(file, { force: true });
  process.kill(server.pid, 'SIGUSR2');
  for (let i = 0; i < 200; i++) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Probe;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  throw new Error('the server did not answer the memory probe');
}

interface Point {
  where: Where;
  probe: Probe;
  ms?: number;
}

async function run(): Promise<Point[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'repoadmin-pglite-memory-'));
  const file = path.join(dir, 'probe.json');
  const dataDir = path.join(dir, 'data');
  const options = {
    env: { REPO_MAN_DB_JDBC: 'pglite', REPO_MAN_DATA_DIR: dataDir, REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD, REPOADMIN_MEMORY_PROBE: file },
    nodeArgs: [...NODE_ARGS, '--require', PROBE],
  };
  const points: Point[] = [];
  let server: Child | undefined;
  const at = async (ms?: number) => points.push({ where: smaps(server!.pid), probe: await probe(server!, file), ms });
  try {
    let t0 = performance.now();
    server = await startServer(options);
    await at(performance.now() - t0);
    const { token } = (await call(server, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD })) as { token: string };
    let next = 0;
    t0 = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < PUBLISHES) await call(server!, '/v1/repositories', publishedRecord(next++), token);
      }),
    );
    await at(performance.now() - t0);
    await server.stop();
    t0 = performance.now();
    server = await startServer(options);
    await at(performance.now() - t0);
    return points;
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (bytes: number) => `${Math.round(bytes / MB)}`.padStart(5);
const LABELS = ['first start', `after ${PUBLISHES.toLocaleString('en')} publishes`, 'later start'];

function line(label: string, p: Point): string {
  const w = p.where;
  const q = p.probe;
  return (
    `${label.padEnd(24)}${mb(w.rss)} | ${mb(w.wasm)}${mb(w.brk)}${mb(w.anon)}${mb(w.files)} | ` +
    `${mb(q.heapUsed)}${mb(q.heapTotal)}${mb(q.external)}${mb(q.arrayBuffers)}${mb(q.wasm)} |` +
    (p.ms === undefined ? '' : `${Math.round(p.ms)}`.padStart(7))
  );
}

/**
 * MB: RSS; where /proc/<pid>/smaps finds it (the WebAssembly memory's resident pages, malloc's main
 * arena, other anonymous memory, mapped files); process.memoryUsage() (V8's heap used and total,
 * external, arrayBuffers) and the WebAssembly memory's size; ms: the start, or the 1,000 publishes.
 */
const HEADER =
  `${'MB'.padEnd(24)}  rss |  wasm   brk  anon files |  heap total  ext  abuf wasm |     ms\n` +
  `${''.padEnd(24)}      | resident in smaps         | process.memoryUsage()       |`;

const runs: Point[][] = [];
for (let i = 0; i < RUNS; i++) {
  const points = await run();
  runs.push(points);
  console.log(`run ${i + 1} of ${RUNS}\n${HEADER}`);
  points.forEach((p, j) => console.log(line(LABELS[j]!, p)));
}
if (RUNS > 1) {
  console.log(`\nmedian of ${RUNS} new data folders\n${HEADER}`);
  LABELS.forEach((label, j) => {
    const at = runs.map((r) => r[j]!);
    const pick = <T>(get: (p: Point) => T) => at.map(get) as number[];
    const where = Object.fromEntries((Object.keys(at[0]!.where) as (keyof Where)[]).map((k) => [k, median(pick((p) => p.where[k]))])) as unknown as Where;
    const probed = Object.fromEntries((Object.keys(at[0]!.probe) as (keyof Probe)[]).map((k) => [k, median(pick((p) => p.probe[k]))])) as unknown as Probe;
    const ms = at[0]!.ms === undefined ? undefined : median(pick((p) => p.ms));
    console.log(line(label, { where, probe: probed, ms }));
  });
}
