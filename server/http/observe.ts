// What every answer gets, whoever serves it (the pipeline, or Koa for the page): an X-Request-Id,
// one access log line, and its count and time in the metrics.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,200}$/;

/** The client's X-Request-Id when it is sensible, else a new one. */
export function requestIdFrom(given: string | string[] | undefined): string {
  return typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID();
}

/** The request's line; `started` from process.hrtime.bigint(). */
export function logRequest(log: Logger, requestId: string, method: string, path: string, status: number, started: bigint): void {
  if (!log.isLevelEnabled('info')) return;
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  log.info({ requestId, method, path, status, durationMs: Math.round(ms * 100) / 100 }, 'request');
}

/** The route label of requests no route matched (404, 405): raw paths would make labels unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Counts and times a request under its route template (http_requests_total is read from the histogram). */
export function countRequest(metrics: Metrics, method: string, route: string, status: number, started: bigint): void {
  metrics.httpDuration.observe({ method, route, status: String(status) }, Number(process.hrtime.bigint() - started) / 1e9);
}
