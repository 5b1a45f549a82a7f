// Exchanging a user name and password for a session token.
import { TokenRequest, TokenResponse } from '../../../common/schemas/auth.js';
import { endpoint } from '../../http/endpoint.js';
import { LOGIN_RESULTS } from '../../metrics.js';
import { generateToken } from '../../services/auth.js';

const LOGIN_RESULT: Record<number, (typeof LOGIN_RESULTS)[number]> = { 200: 'success', 401: 'failure', 429: 'rate_limited' };

export const authenticationEndpoints = [
  endpoint({
    method: 'POST',
    path: '/v1/authentication/generate-token',
    summary: 'Exchange a user name and password for a token',
    tags: ['authentication'],
    access: 'public',
    body: TokenRequest,
    responses: {
      200: { description: 'A new token', schema: TokenResponse },
      400: { description: 'Invalid request' },
      401: { description: 'Wrong user name or password' },
      429: { description: 'Too many failed attempts; see Retry-After' },
    },
    count: (metrics, status) => metrics.logins.inc({ result: LOGIN_RESULT[status] ?? (status < 500 ? 'invalid' : 'error') }),
    audit: { action: 'login', target: (req) => req.body.username, via: 'password' },
    handler: async (req, services) => {
      const body = await generateToken(services, req.body, req.address);
      // The request carried no token: its entry names the user the password proved.
      const { userId, username, role, projectName, mustChangePassword } = body;
      return { body, audit: { actor: { userId, username, role, projectName, mustChangePassword } } };
    },
  }),
];
