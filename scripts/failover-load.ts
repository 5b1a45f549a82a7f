// Publishing clients for the failover drill (bench/failover.ts) and its test
// (test/server/failover.test.ts): each publishes records of its own coordinates, tries a publish
// again after a 503 or a refused connection as the command line does (a publish is idempotent by
// its coordinates), and after each acknowledged publish reads the record back with the position the
// answer carried, through the instance that reads from the replicas. Everything is counted by phase.

/** How long one request may take before it counts as a hang (well above every server timeout). */
const REQUEST_LIMIT_MS = 20_000;
const KEYS = 6;

export interface Acknowledged {
  uid: string;
  artifactId: string;
  version: string;
  at: number;
}

export interface PhaseFigures {
  /** Answers by status; 0 is a refused or dropped connection, -1 a request over REQUEST_LIMIT_MS. */
  statuses: Record<string, number>;
  /** Milliseconds of each answered publish attempt. */
  publishMs: number[];
  readMs: number[];
}

export interface LoadFigures {
  acknowledged: Acknowledged[];
  phases: Record<string, PhaseFigures>;
  /** Reads with a position that did not find the record just published. */
  staleReads: string[];
  /** Reads answered (by which database: the reading instance's /metrics). */
  readsAnswered: number;
}

export interface Load {
  figures: LoadFigures;
  /** Counts what follows under this phase's name. */
  phase(name: string): void;
  /** Acknowledged publishes so far. */
  count(): number;
  /** Lets every client finish the publish it is in, then stops them. */
  stop(): Promise<LoadFigures>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function startLoad(options: { writeUrl: string; readUrl?: string; token: string; clients: number; project: string }): Load {
  const figures: LoadFigures = { acknowledged: [], phases: {}, staleReads: [], readsAnswered: 0 };
  let current = 'before';
  let stopping = false;
  const phase = () => (figures.phases[current] ??= { statuses: {}, publishMs: [], readMs: [] });
  const count = (status: number) => {
    const statuses = phase().statuses;
    statuses[status] = (statuses[status] ?? 0) + 1;
  };

  const request = async (url: string, init: RequestInit): Promise<{ status: number; text: string; headers?: Headers }> => {
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_LIMIT_MS) });
      return { status: res.status, text: await res.text(), headers: res.headers };
    } catch (error) {
      return { status: (error as Error).name === 'TimeoutError' ? -1 : 0, text: String((error as { cause?: { code?: string } }).cause?.code ?? error) };
    }
  };

  const publish = async (body: unknown): Promise<{ uid: string; position?: string }> => {
    for (;;) {
      const started = Date.now();
      const res = await request(`${options.writeUrl}/v1/repositories`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${options.token}` },
        body: JSON.stringify(body),
      });
      count(res.status);
      if (res.status > 0) phase().publishMs.push(Date.now() - started);
      if (res.status === 200 || res.status === 201) {
        return { uid: (JSON.parse(res.text) as { uid: string }).uid, position: res.headers?.get('x-repoadmin-position') ?? undefined };
      }
      // Tried again like the command line: after a 503 (its Retry-After), a refused or dropped
      // connection; after any other server error too, which is counted (and fails the checks).
      if (res.status >= 500 || res.status <= 0) {
        await sleep(Math.min(1000, Number(res.headers?.get('retry-after') ?? 0.2) * 1000));
        continue;
      }
      throw new Error(`publish answered ${res.status}: ${res.text.slice(0, 200)}`);
    }
  };

  const readBack = async (uid: string, version: string, position: string | undefined) => {
    for (;;) {
      const started = Date.now();
      const res = await request(`${options.readUrl}/v1/repositories/${uid}`, {
        headers: { Authorization: `Bearer ${options.token}`, ...(position ? { 'X-Repoadmin-Position': position } : {}) },
      });
      count(res.status);
      if (res.status === 503 || res.status <= 0) {
        await sleep(200);
        continue;
      }
      phase().readMs.push(Date.now() - started);
      figures.readsAnswered++;
      if (res.status !== 200 || (JSON.parse(res.text) as { version?: string }).version !== version) figures.staleReads.push(`${uid} ${version}: ${res.status}`);
      return;
    }
  };

  const client = async (c: number) => {
    for (let i = 0; !stopping; i++) {
      const artifactId = `lib-${(c + i) % KEYS}`;
      const version = `${c}.${i}`;
      const body = { projectName: options.project, branch: 'main', artifact: { groupId: options.project, artifactId, version }, latestVersion: true };
      const { uid, position } = await publish(body);
      figures.acknowledged.push({ uid, artifactId, version, at: Date.now() });
      if (options.readUrl) await readBack(uid, version, position);
    }
  };
  const running = Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)));

  return {
    figures,
    phase(name) {
      current = name;
    },
    count: () => figures.acknowledged.length,
    async stop() {
      stopping = true;
      await running;
      return figures;
    },
  };
}

/** The longest stretch without an acknowledged publish between `from` and `to` (ms). */
export function writeGap(acknowledged: Acknowledged[], from: number, to: number): number {
  let last = from;
  let gap = 0;
  for (const { at } of acknowledged) {
    if (at < from || at > to) continue;
    gap = Math.max(gap, at - last);
    last = at;
  }
  return Math.max(gap, to - last);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
