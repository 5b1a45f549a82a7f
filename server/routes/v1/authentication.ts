// POST /v1/authentication/generate-token
import { TokenRequest, TokenResponse } from '../../../common/schemas/auth.js';
import { clientAddress } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { parse } from '../../middleware/validate.js';
import { generateToken } from '../../services/auth.js';
import { type Endpoint, error, json } from '../endpoint.js';

export const authenticationEndpoints: Endpoint[] = [
  {
    method: 'post',
    path: '/v1/authentication/generate-token',
    doc: {
      tags: ['authentication'],
      summary: 'Exchange a user name and password for a token',
      requestBody: { required: true, ...json(TokenRequest) },
      responses: {
        200: { description: 'A new token', ...json(TokenResponse) },
        400: error('Invalid request'),
        401: error('Wrong user name or password'),
        429: error('Too many failed attempts; see Retry-After'),
      },
    },
    handlers: (services) => [
      async (ctx) => {
        const request = parse(TokenRequest, await readJson(ctx));
        ctx.body = await generateToken(services, request, clientAddress(ctx, services.config.trustProxy));
      },
    ],
  },
];
