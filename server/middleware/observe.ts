// Request id, access log line and metrics for what Koa serves (the page and `/`), by the same
// functions the pipeline uses (server/http/observe.ts).
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { UNMATCHED_ROUTE, countRequest, logRequest, requestIdFrom } from '../http/observe.js';
import { SECURITY_HEADERS } from '../http/pipeline.js';
import type { Metrics } from '../metrics.js';

export function observe(log: Logger, metrics: Metrics | undefined): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const id = requestIdFrom(ctx.get('X-Request-Id'));
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    ctx.set(SECURITY_HEADERS);
    ctx.set('Content-Security-Policy', "frame-ancestors 'none'");
    let status: number | undefined;
    try {
      await next();
      status = ctx.status;
    } finally {
      // The error middleware answers every failure; a throw reaching here becomes Koa's 500.
      status ??= 500;
      const route = ctx.path === '/' ? '/' : ctx.path.startsWith('/public/') ? '/public/*' : UNMATCHED_ROUTE;
      if (metrics) countRequest(metrics, ctx.method, route, status, started);
      logRequest(log, id, ctx.method, ctx.path, status, started);
    }
  };
}
