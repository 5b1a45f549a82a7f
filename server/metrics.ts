// Prometheus metrics of one app, in a registry of its own (several apps share a test process).
import type { Middleware } from 'koa';
import type { Knex } from 'knex';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  publishes: Counter<'created'>;
  logins: Counter<'result'>;
}

/** The subset of knex's (tarn) pool that the gauges read; absent once the database is closed. */
interface Pool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

export const LOGIN_RESULTS = ['success', 'failure', 'rate_limited', 'invalid', 'error'] as const;

export function createMetrics(db: Knex): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  const metrics: Metrics = {
    registry,
    httpRequests: new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames, registers: [registry] }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to its answer',
      labelNames,
      registers: [registry],
    }),
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
  };
  // Known label values start at 0, so rates work from the first scrape.
  for (const created of ['true', 'false']) metrics.publishes.inc({ created }, 0);
  for (const result of LOGIN_RESULTS) metrics.logins.inc({ result }, 0);

  const pool = () => (db.client as { pool?: Pool }).pool;
  new Gauge({
    name: 'repoadmin_db_pool_connections',
    help: 'Database pool connections: used, free, and requests waiting for one (pending)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const p = pool();
      this.set({ state: 'used' }, p?.numUsed() ?? 0);
      this.set({ state: 'free' }, p?.numFree() ?? 0);
      this.set({ state: 'pending' }, p?.numPendingAcquires() ?? 0);
    },
  });
  new Gauge({
    name: 'repoadmin_db_pool_max',
    help: 'Largest number of database connections the pool opens',
    registers: [registry],
    collect() {
      this.set(pool()?.max ?? 0);
    },
  });
  return metrics;
}

/** GET /metrics: the registry in the Prometheus text format. */
export function metricsEndpoint(metrics: Metrics): Middleware {
  return async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}
