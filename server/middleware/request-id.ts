// X-Request-Id on every response: the client's own when it sent a sensible one, else a new one.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,200}$/;

export function requestId(): Middleware {
  return async (ctx, next) => {
    const id = requestIdFrom(ctx.get('X-Request-Id'));
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}

/** The client's X-Request-Id when it is sensible, else a new one. */
export function requestIdFrom(given: string | undefined): string {
  return given !== undefined && SAFE_ID.test(given) ? given : randomUUID();
}
