// POST /v1/authentication/generate-token
import type { Router } from '@koa/router';
import { TokenRequest } from '../../../common/schemas/auth.js';
import { clientAddress } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { parse } from '../../middleware/validate.js';
import { generateToken } from '../../services/auth.js';
import type { Services } from '../../services/context.js';

export function authenticationRoutes(router: Router, services: Services): void {
  router.post('/v1/authentication/generate-token', async (ctx) => {
    const request = parse(TokenRequest, await readJson(ctx));
    ctx.body = await generateToken(services, request, clientAddress(ctx, services.config.trustProxy));
  });
}
