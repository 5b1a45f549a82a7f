// Load generation: autocannon against an HTTP server, and a closed loop of the same concurrency
// for the database-only limit. Both time every answer to the microsecond the same way.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface Measurement {
  /** Successful answers. */
  ok: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx answers, connection errors and timeouts (HTTP), or thrown errors (database). */
  errors: number;
  /** The first error, to say why. */
  firstError?: string;
  /** CPU milliseconds the server process (and its workers) spent per answer, where measured. */
  cpuMsPerRequest?: number;
  /**
   * CPU milliseconds the whole machine spent per answer during the turns (every process: the server,
   * its database, the load generator, a receiver), and the share of all cores busy meanwhile; by
   * `loadTurns` on Linux.
   */
  machineCpuMsPerRequest?: number;
  machineBusy?: number;
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  /** Path and query string. */
  path: string;
  headers?: Record<string, string>;
  /** The JSON body: fixed, or a new one for every request (its running number). */
  body?: string | ((i: number) => string);
}

function measurement(histogram: RecordableHistogram, ok: number, seconds: number, errors: number, firstError?: string): Measurement {
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    ok,
    seconds,
    perSecond: ok / seconds,
    p50Ms: ok > 0 ? ms(histogram.percentile(50)) : NaN,
    p99Ms: ok > 0 ? ms(histogram.percentile(99)) : NaN,
    errors,
    firstError,
  };
}

let requestNumber = 0;

/** Answers counted across one or more autocannon runs of the same request. */
interface Tally {
  histogram: RecordableHistogram;
  ok: number;
  errors: number;
  seconds: number;
  firstError?: string;
}

const newTally = (): Tally => ({ histogram: createHistogram(), ok: 0, errors: 0, seconds: 0 });

async function cannon(tally: Tally, baseUrl: string, request: HttpRequest, connections: number, seconds: number): Promise<void> {
  const headers = { ...request.headers, ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}) };
  const body = request.body;
  const instance = autocannon({
    url: baseUrl + request.path,
    connections,
    duration: seconds,
    method: request.method,
    headers,
    requests: [
      typeof body === 'function'
        ? { method: request.method, path: request.path, headers, setupRequest: (r) => ({ ...r, body: body(requestNumber++) }) }
        : { method: request.method, path: request.path, headers, body },
    ],
  });
  // The instance reports every answer with its client first; the type declarations leave that out.
  (instance as unknown as NodeJS.EventEmitter).on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) {
      tally.ok++;
      tally.histogram.record(Math.max(1, Math.round(ms * 1000)));
    } else {
      tally.firstError ??= `HTTP ${status}`;
    }
  });
  (instance as unknown as NodeJS.EventEmitter).on('reqError', (error: Error) => {
    tally.firstError ??= error.message;
  });
  const result = await instance;
  tally.seconds += result.duration;
  tally.errors += result.non2xx + result.errors + result.timeouts;
}

const measurementOf = (t: Tally) => measurement(t.histogram, t.ok, t.seconds, t.errors, t.firstError);

/** autocannon for `warmupSeconds` (not counted), then for `seconds`. */
export async function loadHttp(baseUrl: string, request: HttpRequest, options: LoadOptions): Promise<Measurement> {
  if (options.warmupSeconds > 0) await cannon(newTally(), baseUrl, request, options.connections, options.warmupSeconds);
  const tally = newTally();
  await cannon(tally, baseUrl, request, options.connections, options.seconds);
  return measurementOf(tally);
}

/**
 * Several requests measured in turns of one second each, for `seconds` in all per request: on a
 * machine whose load drifts (shared cores), each request sees the same conditions as the others.
 */
export async function loadHttpInterleaved(baseUrl: string, requests: HttpRequest[], options: LoadOptions): Promise<Measurement[]> {
  if (options.warmupSeconds > 0) {
    for (const request of requests) await cannon(newTally(), baseUrl, request, options.connections, options.warmupSeconds);
  }
  const tallies = requests.map(newTally);
  for (let round = 0; round < Math.max(1, Math.round(options.seconds)); round++) {
    for (const [i, request] of requests.entries()) await cannon(tallies[i]!, baseUrl, request, options.connections, 1);
  }
  return tallies.map(measurementOf);
}

/**
 * Named requests measured in turns (loadHttpInterleaved) at each number of connections, as a
 * Markdown table: request, connections, answers a second, p50 and p99, errors.
 */
export async function turnsTable(
  baseUrl: string,
  requests: [string, HttpRequest][],
  connectionsList: number[],
  options: Omit<LoadOptions, 'connections'>,
): Promise<string> {
  const lines = ['| request | c | answers/s | p50 ms | p99 ms | errors |', '|---|---|---|---|---|---|'];
  for (const connections of connectionsList) {
    const measured = await loadHttpInterleaved(baseUrl, requests.map(([, r]) => r), { ...options, connections });
    measured.forEach((m, i) => {
      lines.push(`| ${requests[i]![0]} | ${connections} | ${Math.round(m.perSecond)} | ${m.p50Ms.toFixed(2)} | ${m.p99Ms.toFixed(2)} | ${m.errors}${m.firstError ? ` (${m.firstError})` : ''} |`);
    });
  }
  return lines.join('\n');
}

async function loop(once: (i: number) => Promise<unknown>, connections: number, seconds: number, histogram = createHistogram()): Promise<Measurement> {
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = process.hrtime.bigint();
  const end = started + BigInt(Math.round(seconds * 1e9));
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (process.hrtime.bigint() < end) {
        const t0 = process.hrtime.bigint();
        try {
          await once(requestNumber++);
          ok++;
          histogram.record(Math.max(1, Math.round(Number(process.hrtime.bigint() - t0) / 1000)));
        } catch (error) {
          errors++;
          firstError ??= (error as Error).message;
        }
      }
    }),
  );
  return measurement(histogram, ok, Number(process.hrtime.bigint() - started) / 1e9, errors, firstError);
}

/** `connections` concurrent callers of `once`, each starting the next call when its last one ends. */
export async function loadLoop(once: (i: number) => Promise<unknown>, options: LoadOptions): Promise<Measurement> {
  if (options.warmupSeconds > 0) await loop(once, options.connections, options.warmupSeconds);
  return loop(once, options.connections, options.seconds);
}

/**
 * One contender of `loadTurns`: an HTTP server under a request, or a closed loop of calls. `before`
 * runs ahead of each of its turns, outside the time measured (`counted`: false for the warm-up), to
 * put the server in the state this contender is measured in.
 */
export type Contender = ({ baseUrl: string; request: HttpRequest; cpuMs?: () => number } | { once: (i: number) => Promise<unknown> }) & {
  before?: (counted: boolean) => Promise<void>;
};

async function loopInto(tally: Tally, once: (i: number) => Promise<unknown>, connections: number, seconds: number): Promise<void> {
  const part = await loop(once, connections, seconds, tally.histogram);
  tally.ok += part.ok;
  tally.errors += part.errors;
  tally.seconds += part.seconds;
  tally.firstError ??= part.firstError;
}

/** The machine's busy CPU time so far, in milliseconds over all cores (/proc/stat); undefined off Linux. */
function machineBusyMs(): number | undefined {
  try {
    // user nice system idle iowait irq softirq steal, in ticks of 10 ms.
    const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * 10;
  } catch {
    return undefined;
  }
}

/**
 * Several contenders measured side by side in turns of one second each, `seconds` in all for each,
 * after a warm-up of each: on a shared machine whose load drifts, all see the same conditions.
 */
export async function loadTurns(contenders: Contender[], options: LoadOptions): Promise<Measurement[]> {
  const turn = (tally: Tally, c: Contender, seconds: number) =>
    'once' in c ? loopInto(tally, c.once, options.connections, seconds) : cannon(tally, c.baseUrl, c.request, options.connections, seconds);
  if (options.warmupSeconds > 0) {
    for (const c of contenders) {
      await c.before?.(false);
      await turn(newTally(), c, options.warmupSeconds);
    }
  }
  const tallies = contenders.map(newTally);
  const cpu = contenders.map(() => 0);
  const machine = contenders.map(() => ({ busyMs: 0, wallMs: 0 }));
  for (let round = 0; round < Math.max(1, Math.round(options.seconds)); round++) {
    for (const [i, c] of contenders.entries()) {
      await c.before?.(true);
      const cpuBefore = 'cpuMs' in c && c.cpuMs ? c.cpuMs() : 0;
      const busyBefore = machineBusyMs();
      const startedAt = performance.now();
      await turn(tallies[i]!, c, 1);
      if ('cpuMs' in c && c.cpuMs) cpu[i]! += c.cpuMs() - cpuBefore;
      const busyAfter = machineBusyMs();
      if (busyBefore !== undefined && busyAfter !== undefined) {
        machine[i]!.busyMs += busyAfter - busyBefore;
        machine[i]!.wallMs += performance.now() - startedAt;
      }
    }
  }
  return tallies.map((tally, i) => {
    const c = contenders[i]!;
    const m = measurementOf(tally);
    if (m.ok === 0) return m;
    const { busyMs, wallMs } = machine[i]!;
    return {
      ...m,
      ...('cpuMs' in c && c.cpuMs ? { cpuMsPerRequest: cpu[i]! / m.ok } : {}),
      ...(wallMs > 0 ? { machineCpuMsPerRequest: busyMs / m.ok, machineBusy: busyMs / (wallMs * availableParallelism()) } : {}),
    };
  });
}
