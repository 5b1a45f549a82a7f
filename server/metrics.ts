// Prometheus metrics of one app, in a registry of its own (several apps share a test process).
// Under --workers, /metrics is the sum over all workers: the worker that is asked asks the primary,
// which collects every worker's registry (prom-client's AggregatorRegistry). Counters and histograms
// add up; gauges carry a `worker` label, as their sum would mean nothing.
import cluster from 'node:cluster';
import type { Knex } from 'knex';
import type { ReadRouting } from './db/replica.js';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  publishes: Counter<'created'>;
  logins: Counter<'result'>;
  /** Counts a read of the read endpoints by where it was answered from (server/http/reads.ts). */
  countRead(target: ReadTarget): void;
}

/** The subset of knex's (tarn) pool that the gauges read; absent once the database is closed. */
interface Pool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/** Where a read of the read endpoints was answered from (server/http/reads.ts); each is counted from 0. */
export const READ_TARGETS = ['primary', 'replica', 'fallback'] as const;
export type ReadTarget = (typeof READ_TARGETS)[number];

export const LOGIN_RESULTS = ['success', 'failure', 'rate_limited', 'invalid', 'error'] as const;

/** The label that tells workers apart, under --workers; none otherwise. */
function workerLabel(): Record<string, string> {
  return cluster.isWorker ? { worker: String(cluster.worker!.id) } : {};
}

/** The knex client of a database server counts the connections dropped after a failover (server/db/driver.ts, knexClientWithDriver). */
function droppedConnections(db: Knex | undefined): number {
  return (db?.client as { droppedConnections?: number } | undefined)?.droppedConnections ?? 0;
}

/**
 * The metrics of one server. `db` is its database once open, `reads` its read replica's routing
 * once started: metrics are made before either, so that the answers while the server starts are
 * counted too; the pool gauges read 0 until then.
 */
export function createMetrics(db: () => Knex | undefined, reads: () => ReadRouting | undefined = () => undefined): Metrics {
  const registry = new Registry();
  const worker = workerLabel();
  collectDefaultMetrics({ register: registry, labels: worker });
  const labelNames = ['method', 'route', 'status'] as const;
  const readsBy: Record<ReadTarget, number> = { primary: 0, replica: 0, fallback: 0 };
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to its answer',
    labelNames,
    registers: [registry],
  });
  const metrics: Metrics = {
    registry,
    httpDuration,
    publishes: new Counter({
      name: 'repoadmin_publishes_total',
      help: 'Version records published; created="false" when the same coordinates were replaced',
      labelNames: ['created'] as const,
      registers: [registry],
    }),
    logins: new Counter({
      name: 'repoadmin_logins_total',
      help: `generate-token answers by result (${LOGIN_RESULTS.join(', ')})`,
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    countRead: (target) => void readsBy[target]++,
  };
  // The histogram counts every answer already: http_requests_total is read from it when scraped, so
  // that an answer costs one label lookup instead of two.
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered',
    labelNames,
    registers: [registry],
    async collect() {
      const { values } = await httpDuration.get();
      this.reset();
      for (const { metricName, labels, value } of values) {
        if (metricName === 'http_request_duration_seconds_count') this.inc(labels as Record<(typeof labelNames)[number], string>, value);
      }
    },
  });
  // Counted in a plain object and handed to the counter when scraped: a label lookup per read cost
  // more than the rest of the counting.
  new Counter({
    name: 'repoadmin_db_reads_total',
    help: 'Reads of the read endpoints (lookups, searches, records) by target: primary (no replica configured), replica, fallback (the primary, the replica being behind, unreachable or not yet at the position sent)',
    labelNames: ['target'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const target of READ_TARGETS) this.inc({ target }, readsBy[target]);
    },
  });
  // Known label values start at 0, so rates work from the first scrape.
  for (const created of ['true', 'false']) metrics.publishes.inc({ created }, 0);
  for (const result of LOGIN_RESULTS) metrics.logins.inc({ result }, 0);

  const pool = () => (db()?.client as { pool?: Pool } | undefined)?.pool;
  new Gauge({
    name: 'repoadmin_db_pool_connections',
    help: 'Database pool connections: used, free, and requests waiting for one (pending)',
    labelNames: ['state', 'worker'] as const,
    registers: [registry],
    collect() {
      const p = pool();
      this.set({ ...worker, state: 'used' }, p?.numUsed() ?? 0);
      this.set({ ...worker, state: 'free' }, p?.numFree() ?? 0);
      this.set({ ...worker, state: 'pending' }, p?.numPendingAcquires() ?? 0);
    },
  });
  new Gauge({
    name: 'repoadmin_db_pool_max',
    help: 'Largest number of database connections the pool opens',
    labelNames: ['worker'] as const,
    registers: [registry],
    collect() {
      this.set(worker, pool()?.max ?? 0);
    },
  });
  new Counter({
    name: 'repoadmin_db_connections_dropped_total',
    help: 'Database connections dropped after an error that made them useless: their server shut down, crashed or became a replica (a failover)',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ pool: 'primary' }, droppedConnections(db()));
      const replica = reads()?.replica;
      if (replica) this.inc({ pool: 'replica' }, droppedConnections(replica));
    },
  });
  new Gauge({
    name: 'repoadmin_db_replica_lag_seconds',
    help: 'How far behind the primary the read replica was at its last check (NaN: it did not answer; no value without a replica)',
    labelNames: ['worker'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const routing = reads();
      if (routing) this.set(worker, (routing.lagMs() ?? Number.NaN) / 1000);
    },
  });
  if (cluster.isWorker) {
    // Constructing one installs the listener that answers the primary with this registry.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries(registry);
  }
  return metrics;
}

const METRICS_REQUEST = 'repoadmin:metrics-request';
const METRICS_ANSWER = 'repoadmin:metrics-answer';
/** The primary collects from every worker; prom-client itself gives up on one after 5 s. */
const CLUSTER_WAIT_MS = 6_000;

interface MetricsAnswer {
  type: typeof METRICS_ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/** In the primary of --workers: answers a worker's request for the sum over all workers. */
export function answerMetricsRequests(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== METRICS_REQUEST) return;
    const reply = (answer: Omit<MetricsAnswer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: METRICS_ANSWER, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text: string) => reply({ text }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}

let nextRequest = 0;

/** In a worker: the sum over all workers, from the primary. */
function clusterMetrics(): Promise<string> {
  const id = nextRequest++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error('the primary did not send the metrics in time')), CLUSTER_WAIT_MS);
    const onMessage = (message: MetricsAnswer) => {
      if (message?.type !== METRICS_ANSWER || message.id !== id) return;
      finish(message.error === undefined ? undefined : new Error(message.error), message.text);
    };
    function finish(error?: Error, text?: string) {
      clearTimeout(timer);
      process.off('message', onMessage);
      if (error) reject(error);
      else resolve(text ?? '');
    }
    process.on('message', onMessage);
    process.send!({ type: METRICS_REQUEST, id });
  });
}

/** What GET /metrics answers, in the Prometheus text format: under --workers, the sum over the workers. */
export function metricsText(metrics: Metrics): Promise<string> {
  return cluster.isWorker ? clusterMetrics() : metrics.registry.metrics();
}
