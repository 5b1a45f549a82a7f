// One log line per request: request id, method, path, status, duration.
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

export function accessLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      logRequest(log, ctx.state.requestId as string, ctx.method, ctx.path, ctx.status, started);
    }
  };
}

/** The request's line; `started` from process.hrtime.bigint(). */
export function logRequest(log: Logger, requestId: string, method: string, path: string, status: number, started: bigint): void {
  if (!log.isLevelEnabled('info')) return;
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  log.info({ requestId, method, path, status, durationMs: Math.round(ms * 100) / 100 }, 'request');
}
