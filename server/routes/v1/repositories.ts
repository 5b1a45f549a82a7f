// The repository routes: publish, search, latest, one record.
import type { Router } from '@koa/router';
import {
  LatestQuery,
  SearchQuery,
  SearchRequest,
  UidParams,
  VersionRecord,
  paging,
  searchFilters,
} from '../../../common/schemas/repositories.js';
import { findByUid, findLatest } from '../../db/versions.js';
import { currentActor, optionalToken, requireToken } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { parse, parseQuery } from '../../middleware/validate.js';
import type { Services } from '../../services/context.js';
import { publish, search } from '../../services/versions.js';

export function repositoryRoutes(router: Router, s: Services): void {
  const reader = optionalToken(s, () => !s.config.searchPublic);

  router.post('/v1/repositories', requireToken(s, { scope: 'publish' }), async (ctx) => {
    const result = await publish(s, currentActor(ctx), parse(VersionRecord, await readJson(ctx)));
    ctx.status = result.created ? 201 : 200;
    ctx.body = result;
  });

  router.post('/v1/repositories/search', reader, async (ctx) => {
    const query = parseQuery(SearchQuery, ctx.query);
    const request = parse(SearchRequest, await readJson(ctx, { optional: true }));
    ctx.body = await search(s, searchFilters(request), paging(query));
  });

  router.get('/v1/repositories/latest', reader, async (ctx) => {
    ctx.body = await findLatest(s.db, parseQuery(LatestQuery, ctx.query));
  });

  router.get('/v1/repositories/:uid', reader, async (ctx) => {
    ctx.body = await findByUid(s.db, parse(UidParams, ctx.params).uid);
  });
}
