// The user routes: create, list, who am I, change a password, delete.
import { Me, PasswordChangeRequest, UserCreateRequest, UserIdParams, UserList, UserResult } from '../../../common/schemas/users.js';
import { currentActor, requireToken } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { userResultOnError } from '../../middleware/errors.js';
import { parse } from '../../middleware/validate.js';
import { changePassword, createUser, deleteUser, listUsers, me } from '../../services/users.js';
import { type Endpoint, bearer, error, json, uuidPath } from '../endpoint.js';

export const userEndpoints: Endpoint[] = [
  {
    method: 'post',
    path: '/v1/users',
    doc: {
      tags: ['user'],
      summary: 'Create a user (administrators)',
      security: bearer,
      requestBody: { required: true, ...json(UserCreateRequest) },
      responses: {
        201: { description: 'Created', ...json(UserResult) },
        400: error('Invalid request; the body has valid: false'),
        401: error('No valid token'),
        403: error('Not an administrator, or a project token'),
        409: error('The user name is taken; the body has valid: false'),
      },
    },
    handlers: (services) => [
      userResultOnError(),
      requireToken(services, { role: 'ROLE_ADMIN' }),
      async (ctx) => {
        ctx.body = await createUser(services, parse(UserCreateRequest, await readJson(ctx)));
        ctx.status = 201;
      },
    ],
  },
  {
    method: 'get',
    path: '/v1/users',
    doc: {
      tags: ['user'],
      summary: 'List users (administrators)',
      security: bearer,
      responses: { 200: { description: 'All users', ...json(UserList) }, 401: error('No valid token'), 403: error('Not an administrator, or a project token') },
    },
    handlers: (services) => [
      requireToken(services, { role: 'ROLE_ADMIN' }),
      async (ctx) => {
        ctx.body = { users: await listUsers(services) };
      },
    ],
  },
  {
    method: 'get',
    path: '/v1/users/me',
    doc: {
      tags: ['user'],
      summary: 'The user of the token',
      security: bearer,
      responses: { 200: { description: 'The user', ...json(Me) }, 401: error('No valid token') },
    },
    handlers: (services) => [
      // Who am I works while the password must still be changed: it is how a client learns that it must.
      requireToken(services, { allowWhileMustChange: () => true, scope: 'read' }),
      (ctx) => {
        ctx.body = me(currentActor(ctx));
      },
    ],
  },
  {
    method: 'put',
    path: '/v1/users/:userId/password',
    doc: {
      tags: ['user'],
      summary: 'Change a password (own, or any for administrators); revokes earlier tokens',
      security: bearer,
      parameters: [uuidPath('userId')],
      requestBody: { required: true, ...json(PasswordChangeRequest) },
      responses: {
        200: { description: 'Changed; own changes carry a fresh token', ...json(UserResult) },
        400: error('Invalid password or id'),
        401: error('No valid token'),
        403: error('Not allowed (another user, or a project token)'),
        404: error('No such user'),
      },
    },
    handlers: (services) => [
      userResultOnError(),
      requireToken(services, { allowWhileMustChange: (ctx, actor) => ctx.params.userId === actor.userId }),
      async (ctx) => {
        const { userId } = parse(UserIdParams, ctx.params);
        const { password } = parse(PasswordChangeRequest, await readJson(ctx));
        ctx.body = await changePassword(services, currentActor(ctx), userId, password);
      },
    ],
  },
  {
    method: 'delete',
    path: '/v1/users/:userId',
    doc: {
      tags: ['user'],
      summary: 'Delete a user (administrators); revokes its tokens',
      security: bearer,
      parameters: [uuidPath('userId')],
      responses: {
        204: { description: 'Deleted' },
        401: error('No valid token'),
        403: error('Not an administrator, or a project token'),
        404: error('No such user'),
        409: error('The last administrator'),
      },
    },
    handlers: (services) => [
      requireToken(services, { role: 'ROLE_ADMIN' }),
      async (ctx) => {
        await deleteUser(services, parse(UserIdParams, ctx.params).userId);
        ctx.status = 204;
      },
    ],
  },
];
