// The project token routes: make, list, revoke. Session tokens only: a project token cannot make more.
import {
  ProjectTokenCreateRequest,
  ProjectTokenCreated,
  ProjectTokenIdParams,
  ProjectTokenList,
  ProjectTokenListQuery,
} from '../../../common/schemas/tokens.js';
import { currentActor, requireToken } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { parse, parseQuery } from '../../middleware/validate.js';
import { createProjectToken, listProjectTokens, revokeProjectToken } from '../../services/tokens.js';
import { type Endpoint, bearer, error, json, query, uuidPath } from '../endpoint.js';

export const tokenEndpoints: Endpoint[] = [
  {
    method: 'post',
    path: '/v1/tokens',
    doc: {
      tags: ['token'],
      summary: 'Make a project token (shown once; the server keeps its SHA-256 only)',
      description: 'Session tokens only. userId: administrators may name any user; others only themselves.',
      security: bearer,
      requestBody: { required: true, ...json(ProjectTokenCreateRequest) },
      responses: {
        201: { description: 'Made; the answer is the only place the token appears', ...json(ProjectTokenCreated) },
        400: error('Invalid request'),
        401: error('No valid token'),
        403: error('A project token, another user (not an administrator), or a password that must be changed'),
        404: error('No such user'),
        409: error('The user has a token of that name'),
      },
    },
    handlers: (services) => [
      requireToken(services),
      async (ctx) => {
        ctx.body = await createProjectToken(services, currentActor(ctx), parse(ProjectTokenCreateRequest, await readJson(ctx)));
        ctx.status = 201;
      },
    ],
  },
  {
    method: 'get',
    path: '/v1/tokens',
    doc: {
      tags: ['token'],
      summary: "The caller's project tokens; administrators see all, or one user's",
      security: bearer,
      parameters: [query('userId', { type: 'string', format: 'uuid' }, "only this user's tokens (administrators: anyone)")],
      responses: {
        200: { description: 'The tokens, without their secrets', ...json(ProjectTokenList) },
        400: error('userId is not a UUID'),
        401: error('No valid token'),
        403: error('A project token, or another user (not an administrator)'),
        404: error('No such user'),
      },
    },
    handlers: (services) => [
      requireToken(services),
      async (ctx) => {
        const { userId } = parseQuery(ProjectTokenListQuery, ctx.query);
        ctx.body = { tokens: await listProjectTokens(services, currentActor(ctx), userId) };
      },
    ],
  },
  {
    method: 'delete',
    path: '/v1/tokens/:id',
    doc: {
      tags: ['token'],
      summary: 'Revoke a project token (its owner or an administrator)',
      security: bearer,
      parameters: [uuidPath('id')],
      responses: {
        204: { description: 'Revoked' },
        400: error('Not a UUID'),
        401: error('No valid token'),
        403: error('A project token'),
        404: error("No such token, or another user's"),
      },
    },
    handlers: (services) => [
      requireToken(services),
      async (ctx) => {
        await revokeProjectToken(services, currentActor(ctx), parse(ProjectTokenIdParams, ctx.params).id);
        ctx.status = 204;
      },
    ],
  },
];
