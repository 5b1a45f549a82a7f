// The error middleware of what Koa serves (the page, `/`): every failure becomes the one error body.
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { AppError } from '../../common/errors.js';
import type { Outages } from '../db/outage.js';
import { failureAnswer } from '../http/errors.js';

export function errors(log: Logger, outages: Outages): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null && ctx.status === 404) {
        throw new AppError('not_found', `no such resource: ${ctx.method} ${ctx.path}`);
      }
      // The router answers a known path with a wrong method by status only (and an Allow header).
      if (ctx.body == null && (ctx.status === 405 || ctx.status === 501)) {
        throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
      }
    } catch (caught) {
      const answer = failureAnswer(caught, ctx.state.requestId as string | undefined, log, outages);
      ctx.status = answer.status;
      ctx.body = answer.body;
      if (answer.retryAfter !== undefined) ctx.set('Retry-After', String(answer.retryAfter));
    }
  };
}
