// /health: the process is up. /health/ready: the database answers too.
import type { Router } from '@koa/router';
import { AppError } from '../../common/errors.js';
import type { Services } from '../services/context.js';

export function healthRoutes(router: Router, s: Services): void {
  router.get('/health', (ctx) => {
    ctx.body = { status: 'up' };
  });
  router.get('/health/ready', async (ctx) => {
    try {
      await s.db.raw('select 1');
    } catch (error) {
      throw new AppError('unavailable', 'the database is not reachable', { cause: error });
    }
    ctx.body = { status: 'up', database: 'up' };
  });
}
