// The project token routes: make, list, revoke. Session tokens only: a project token cannot make more.
import type { Router } from '@koa/router';
import { ProjectTokenCreateRequest, ProjectTokenIdParams, ProjectTokenListQuery } from '../../../common/schemas/tokens.js';
import { currentActor, requireToken } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { parse, parseQuery } from '../../middleware/validate.js';
import type { Services } from '../../services/context.js';
import { createProjectToken, listProjectTokens, revokeProjectToken } from '../../services/tokens.js';

export function tokenRoutes(router: Router, services: Services): void {
  const session = requireToken(services);

  router.post('/v1/tokens', session, async (ctx) => {
    ctx.body = await createProjectToken(services, currentActor(ctx), parse(ProjectTokenCreateRequest, await readJson(ctx)));
    ctx.status = 201;
  });

  router.get('/v1/tokens', session, async (ctx) => {
    const { userId } = parseQuery(ProjectTokenListQuery, ctx.query);
    ctx.body = { tokens: await listProjectTokens(services, currentActor(ctx), userId) };
  });

  router.delete('/v1/tokens/:id', session, async (ctx) => {
    await revokeProjectToken(services, currentActor(ctx), parse(ProjectTokenIdParams, ctx.params).id);
    ctx.status = 204;
  });
}
