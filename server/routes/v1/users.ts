// The user routes: create, list, who am I, change a password, delete.
import type { Router } from '@koa/router';
import { PasswordChangeRequest, UserCreateRequest, UserIdParams } from '../../../common/schemas/users.js';
import { currentActor, requireToken } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { userResultOnError } from '../../middleware/errors.js';
import { parse } from '../../middleware/validate.js';
import type { Services } from '../../services/context.js';
import { changePassword, createUser, deleteUser, listUsers, me } from '../../services/users.js';

export function userRoutes(router: Router, services: Services): void {
  const admin = requireToken(services, { role: 'ROLE_ADMIN' });

  router.post('/v1/users', userResultOnError(), admin, async (ctx) => {
    ctx.body = await createUser(services, parse(UserCreateRequest, await readJson(ctx)));
    ctx.status = 201;
  });

  router.get('/v1/users', admin, async (ctx) => {
    ctx.body = { users: await listUsers(services) };
  });

  // Who am I works while the password must still be changed: it is how a client learns that it must.
  router.get('/v1/users/me', requireToken(services, { allowWhileMustChange: () => true, scope: 'read' }), async (ctx) => {
    ctx.body = me(currentActor(ctx));
  });

  router.put(
    '/v1/users/:userId/password',
    userResultOnError(),
    requireToken(services, { allowWhileMustChange: (ctx, actor) => ctx.params.userId === actor.userId }),
    async (ctx) => {
      const { userId } = parse(UserIdParams, ctx.params);
      const { password } = parse(PasswordChangeRequest, await readJson(ctx));
      ctx.body = await changePassword(services, currentActor(ctx), userId, password);
    },
  );

  router.delete('/v1/users/:userId', admin, async (ctx) => {
    await deleteUser(services, parse(UserIdParams, ctx.params).userId);
    ctx.status = 204;
  });
}
