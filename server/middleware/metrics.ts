// Counts and times every request by method, route template and status, and reads the publish and
// login outcomes off their answers, so that routes and services need no metrics code.
import type { Context, Middleware } from 'koa';
import type { Metrics } from '../metrics.js';

/** The route label of requests no route matched (404, 405): raw paths would make labels unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';
const PUBLIC_ROUTE = '/public/*';

const PUBLISH = 'POST /v1/repositories';
const LOGIN = 'POST /v1/authentication/generate-token';
const LOGIN_RESULT: Record<number, string> = { 200: 'success', 401: 'failure', 429: 'rate_limited' };

function routeLabel(ctx: Context): string {
  // @koa/router sets _matchedRoute to the template ("/v1/repositories/:uid") of the route that ran.
  const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  if (matched !== undefined) return String(matched);
  return ctx.path.startsWith('/public/') ? PUBLIC_ROUTE : UNMATCHED_ROUTE;
}

function countOutcome(metrics: Metrics, method: string, route: string, status: number): void {
  const key = `${method} ${route}`;
  if (key === PUBLISH && (status === 200 || status === 201)) {
    metrics.publishes.inc({ created: String(status === 201) });
  } else if (key === LOGIN) {
    metrics.logins.inc({ result: LOGIN_RESULT[status] ?? (status < 500 ? 'invalid' : 'error') });
  }
}

/** Counts and times a request that no Koa middleware saw (server/fast-reads.ts, server/fast-publish.ts). */
export function countRequest(metrics: Metrics, method: string, route: string, status: number, started: bigint): void {
  const labels = { method, route, status: String(status) };
  metrics.httpRequests.inc(labels);
  metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  countOutcome(metrics, method, route, status);
}

export function httpMetrics(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const stop = metrics.httpDuration.startTimer();
    let status: number | undefined;
    try {
      await next();
      status = ctx.status;
    } finally {
      // The error middleware answers every failure; a throw reaching here becomes Koa's 500.
      status ??= 500;
      const route = routeLabel(ctx);
      const labels = { method: ctx.method, route, status: String(status) };
      metrics.httpRequests.inc(labels);
      stop(labels);
      countOutcome(metrics, ctx.method, route, status);
    }
  };
}
