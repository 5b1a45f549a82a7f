// The operations endpoints. /health: the process is up. /health/ready: the database answers too.
// /metrics: Prometheus metrics, unless switched off.
import { AppError } from '../../common/errors.js';
import { within } from '../db/client-timeout.js';
import { metricsEndpoint } from '../metrics.js';
import { type Endpoint, error, open } from './endpoint.js';

/** Readiness answers within 3 s (docs/api.md, "Faults"), whatever the database's own timeouts. */
const READY_WITHIN_MS = 2_000;

export const operationEndpoints: Endpoint[] = [
  {
    method: 'get',
    path: '/health',
    doc: { tags: ['operations'], summary: 'The process is up', security: open, responses: { 200: { description: 'Up' } } },
    handlers: () => [
      (ctx) => {
        ctx.body = { status: 'up' };
      },
    ],
  },
  {
    method: 'get',
    path: '/health/ready',
    doc: { tags: ['operations'], summary: 'The database answers', security: open, responses: { 200: { description: 'Ready' }, 503: error('Database unreachable') } },
    handlers: (services) => [
      async (ctx) => {
        try {
          await within(services.db.raw('select 1'), READY_WITHIN_MS, () => new Error(`no answer from the database within ${READY_WITHIN_MS} ms`));
        } catch (error) {
          throw new AppError('unavailable', 'the database is not reachable', { cause: error });
        }
        ctx.body = { status: 'up', database: 'up' };
      },
    ],
  },
  {
    method: 'get',
    path: '/metrics',
    doc: {
      tags: ['operations'],
      summary: 'Prometheus metrics (absent when REPO_MAN_METRICS=false)',
      security: open,
      responses: { 200: { description: 'The Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
    enabled: (services) => services.metrics !== undefined,
    handlers: (services) => [metricsEndpoint(services.metrics!)],
  },
];
