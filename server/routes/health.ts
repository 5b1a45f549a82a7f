// /health: the process is up. /health/ready: the database answers too.
import type { Router } from '@koa/router';
import { AppError } from '../../common/errors.js';
import { within } from '../db/client-timeout.js';
import type { Services } from '../services/context.js';

/** Readiness answers within 3 s (api.md, Faults), whatever the database's own timeouts. */
const READY_WITHIN_MS = 2_000;

export function healthRoutes(router: Router, services: Services): void {
  router.get('/health', (ctx) => {
    ctx.body = { status: 'up' };
  });
  router.get('/health/ready', async (ctx) => {
    try {
      await within(services.db.raw('select 1'), READY_WITHIN_MS, () => new Error(`no answer from the database within ${READY_WITHIN_MS} ms`));
    } catch (error) {
      throw new AppError('unavailable', 'the database is not reachable', { cause: error });
    }
    ctx.body = { status: 'up', database: 'up' };
  });
}
