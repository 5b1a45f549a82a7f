// One log line per request: request id, method, path, status, duration.
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

export function accessLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info(
        { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, durationMs: Math.round(ms * 100) / 100 },
        'request',
      );
    }
  };
}
