// The operations endpoints. /health: the process is up. /health/ready: the database answers too.
// /metrics: Prometheus metrics, unless switched off. The API description in both forms.
import { AppError } from '../../common/errors.js';
import { within } from '../db/client-timeout.js';
import { endpoint } from '../http/endpoint.js';
import { metricsText } from '../metrics.js';

/** Readiness answers within 3 s (docs/api.md, "Faults"), whatever the database's own timeouts. */
const READY_WITHIN_MS = 2_000;

export const operationEndpoints = [
  endpoint({
    method: 'GET',
    path: '/health',
    summary: 'The process is up',
    tags: ['operations'],
    access: 'public',
    responses: { 200: { description: 'Up' } },
    handler: () => ({ body: { status: 'up' } }),
  }),
  endpoint({
    method: 'GET',
    path: '/health/ready',
    summary: 'The database answers',
    tags: ['operations'],
    access: 'public',
    responses: { 200: { description: 'Ready' }, 503: { description: 'Database unreachable' } },
    handler: async (_req, services) => {
      try {
        // A table of ours, not `select 1`: a connection whose database was dropped still answers that.
        await within(services.db('settings').select(services.db.raw('1')).limit(1), READY_WITHIN_MS, () => new Error(`no answer from the database within ${READY_WITHIN_MS} ms`));
      } catch (error) {
        throw new AppError('unavailable', 'the database is not reachable', { cause: error });
      }
      return { body: { status: 'up', database: 'up' } };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics (absent when REPO_MAN_METRICS=false)',
    tags: ['operations'],
    access: 'public',
    responses: { 200: { description: 'The Prometheus text format', contentType: 'text/plain' } },
    enabled: (services) => services.metrics !== undefined,
    handler: async (_req, services) => {
      const metrics = services.metrics!;
      return { text: { type: metrics.registry.contentType, body: await metricsText(metrics) } };
    },
  }),
];
