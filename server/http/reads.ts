// Which database an endpoint's handler runs on (docs/operations.md, "Read replicas"): endpoints
// declared `readReplica` read from the replica when one is configured and close enough, else from
// the primary; every other endpoint runs on the primary, and on PostgreSQL the answer to a write
// carries the primary's WAL position, which the client sends back with its next reads.
import { AppError } from '../../common/errors.js';
import { KINDS } from '../db/dialects/kinds.js';
import { isDatabaseUnavailable } from '../db/faults.js';
import { parsePosition, positionAfterCommit } from '../db/replica.js';
import type { ReadTarget } from '../metrics.js';
import type { Services } from '../services/context.js';
import type { Answer, Endpoint, EndpointRequest } from './endpoint.js';

/** The header of a write's answer, and of a read that must see that write. */
export const POSITION_HEADER = 'X-Repoadmin-Position';
const POSITION_HEADER_LOWER = POSITION_HEADER.toLowerCase();

/** Runs an endpoint's handler with the services of the database chosen for the request. */
export type HandlerRun = (request: EndpointRequest<unknown, unknown, unknown>) => Promise<Answer> | Answer;

function positionOf(headers: EndpointRequest<unknown, unknown, unknown>['headers']): bigint | undefined {
  const sent = headers[POSITION_HEADER_LOWER];
  if (sent === undefined) return undefined;
  const position = typeof sent === 'string' ? parsePosition(sent.trim()) : undefined;
  if (position === undefined) throw new AppError('validation', `${POSITION_HEADER} must be a WAL position as a write's answer gave it, e.g. 0/3000148`);
  return position;
}

/** How the pipeline runs `endpoint`'s handler: compiled once per endpoint at start. */
export function handlerRun(endpoint: Endpoint, services: Services): HandlerRun {
  const reads = services.reads;
  const handler = endpoint.handler;
  if (endpoint.readReplica) {
    const count = (target: ReadTarget) => services.metrics?.countRead(target);
    if (!reads) {
      return (request) => {
        positionOf(request.headers);
        count('primary');
        return handler(request, services);
      };
    }
    // Made once: a handler reads `services.db`, which is the replica's pool here.
    const onReplica: Services = { ...services, db: reads.replica };
    return async (request) => {
      const position = positionOf(request.headers);
      if (reads.usable()) {
        try {
          const answer = position === undefined ? await handler(request, onReplica) : (await reads.readAt(position, async (trx) => handler(request, { ...services, db: trx })))?.value;
          if (answer) {
            count('replica');
            return answer;
          }
        } catch (error) {
          if (!isDatabaseUnavailable(error)) throw error;
          // A read is safe to run again: on the primary, and the replica waits for its next check.
          reads.failed();
        }
      }
      count('fallback');
      return handler(request, services);
    };
  }
  if (endpoint.method === 'GET' || !KINDS[services.config.db.kind].readReplicas) return (request) => handler(request, services);
  return async (request) => {
    const answer = await handler(request, services);
    // The write has committed; a position the server cannot read now is left out, not an error.
    const position = await positionAfterCommit(services.db).catch(() => undefined);
    if (position !== undefined) answer.headers = { ...answer.headers, [POSITION_HEADER]: position };
    return answer;
  };
}
