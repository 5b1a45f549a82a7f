// The one error answer: every failure becomes the error body of docs/api.md; only what is safe is
// shown, and each failure is logged as it should be (an outage once, with a count).
import type { Logger } from 'pino';
import { AppError, type WireErrorCode, codeForStatus, isAppError, isWireErrorCode } from '../../common/errors.js';
import type { ErrorBody } from '../../common/schemas/errors.js';
import { isDatabaseUnavailable, isRetryable } from '../db/faults.js';
import type { Outages } from '../db/outage.js';

export function toAppError(error: unknown): AppError {
  // A terminal code (a start-up setting's `usage`) has no place on the wire: it is a fault here.
  if (isAppError(error) && isWireErrorCode(error.code)) return error;
  if (isDatabaseUnavailable(error)) {
    return new AppError('unavailable', 'the database is unavailable: try again shortly', { cause: error });
  }
  // Koa and its middleware (koa-static) throw http-errors with `status` and `expose`.
  const e = error as { status?: number; expose?: boolean; message?: string } | undefined;
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    const code: WireErrorCode = codeForStatus(e.status);
    return new AppError(code, e.expose && e.message ? e.message : code.replace(/_/g, ' '), { cause: error });
  }
  return new AppError('internal', 'internal error: the server log has the details', { cause: error });
}

export function errorBody(error: AppError): ErrorBody & Record<string, unknown> {
  return {
    _status: false,
    _message: { category: 'ERROR', code: isWireErrorCode(error.code) ? error.code : 'internal', message: error.message },
    ...(error.code === 'validation' && error.details.errors ? { errors: error.details.errors } : {}),
    ...(error.details.reason ? { reason: error.details.reason } : {}),
    ...error.details.body,
  };
}

/**
 * When a client should try again after a 503 that named no time of its own: the database is away
 * (a failover takes about the leader key's ttl, docs/operations.md) or the server is starting.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** The answer to a failed request, logged as it should be; every 503 says when to try again. */
export function failureAnswer(
  caught: unknown,
  requestId: string | undefined,
  log: Logger,
  outages: Outages,
): { status: number; body: ErrorBody & Record<string, unknown>; retryAfter?: number } {
  const error = toAppError(caught);
  // An outage is logged once, with a count, not once per request (server/db/outage.ts).
  const cause = error.details.cause ?? caught;
  if (error.code === 'unavailable' && isRetryable(cause)) log.warn({ requestId, code: (cause as { code?: string }).code }, 'a transaction still collided after its retries');
  else if (error.code === 'unavailable' && error.details.upstream) log.warn({ requestId, upstream: error.details.upstream }, error.message);
  else if (error.code === 'unavailable') outages.failed(cause);
  else if (error.code === 'internal') log.error({ err: cause, requestId }, 'request failed');
  const retryAfter = error.details.retryAfter ?? (error.status === 503 ? UNAVAILABLE_RETRY_AFTER_SECONDS : undefined);
  return { status: error.status, body: errorBody(error), retryAfter };
}
