// The repository routes: publish, search, latest, one record.
import type { Router } from '@koa/router';
import { LatestQuery, SearchFiltersBody, SearchPaging, UidParams, VersionRecord } from '../../../common/schemas/repositories.js';
import { currentActor, optionalToken, requireToken } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { parse, parseQuery } from '../../middleware/validate.js';
import type { Services } from '../../services/context.js';
import { byUid, latest, publish, search } from '../../services/versions.js';

export function repositoryRoutes(router: Router, services: Services): void {
  const reader = optionalToken(services, () => !services.config.searchPublic);

  router.post('/v1/repositories', requireToken(services, { scope: 'publish' }), async (ctx) => {
    const result = await publish(services, currentActor(ctx), parse(VersionRecord, await readJson(ctx)));
    ctx.status = result.created ? 201 : 200;
    ctx.body = result;
  });

  router.post('/v1/repositories/search', reader, async (ctx) => {
    const paging = parseQuery(SearchPaging, ctx.query);
    const filters = parse(SearchFiltersBody, await readJson(ctx, { optional: true }));
    ctx.body = await search(services, filters, paging);
  });

  router.get('/v1/repositories/latest', reader, async (ctx) => {
    ctx.body = await latest(services, parseQuery(LatestQuery, ctx.query));
  });

  router.get('/v1/repositories/:uid', reader, async (ctx) => {
    ctx.body = await byUid(services, parse(UidParams, ctx.params).uid);
  });
}
