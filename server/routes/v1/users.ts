// The user endpoints: create, list, who am I, change a password, delete.
import { Uuid } from '../../../common/schemas/common.js';
import { Me, PasswordChangeRequest, UserCreateRequest, UserIdParams, UserList, UserResult, sameUserId } from '../../../common/schemas/users.js';
import { endpoint } from '../../http/endpoint.js';
import { ACCOUNTS } from '../../policy/access.js';
import { changePassword, createUser, deleteUser, listUsers, me } from '../../services/users.js';

/**
 * The user endpoints' error answers carry `valid: false` and `userId` (docs/api.md, "Errors"): the
 * id as the endpoint reads it, a UUID in lower case; anything else as it came.
 */
const userResult = (params: Record<string, string>) => {
  const given = params.userId;
  return { valid: false, userId: given === undefined ? null : (Uuid.safeParse(given).data ?? given) };
};

export const userEndpoints = [
  endpoint({
    method: 'POST',
    path: '/v1/users',
    summary: 'Create a user (administrators)',
    tags: ['user'],
    access: { role: 'ROLE_ADMIN', purpose: ACCOUNTS },
    body: UserCreateRequest,
    responses: {
      201: { description: 'Created', schema: UserResult },
      400: { description: 'Invalid request; the body has valid: false' },
      409: { description: 'The user name is taken; the body has valid: false' },
    },
    errorFields: userResult,
    audit: { action: 'user.created', target: (req) => req.body.username },
    handler: async (req, services) => ({ status: 201, body: await createUser(services, req.body) }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/users',
    summary: 'List users (administrators)',
    tags: ['user'],
    access: { role: 'ROLE_ADMIN', purpose: ACCOUNTS },
    responses: { 200: { description: 'All users', schema: UserList } },
    handler: async (_req, services) => ({ body: { users: await listUsers(services) } }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/users/me',
    summary: 'The user of the token',
    tags: ['user'],
    // Who am I works while the password must still be changed: it is how a client learns that it must.
    access: { scope: 'read', purpose: 'reading who the caller is', allowWhileMustChange: () => true },
    responses: { 200: { description: 'The user', schema: Me } },
    handler: (req) => ({ body: me(req.actor!) }),
  }),
  endpoint({
    method: 'PUT',
    path: '/v1/users/{userId}/password',
    summary: 'Change a password (own, or any for administrators); revokes earlier tokens',
    tags: ['user'],
    access: { purpose: ACCOUNTS, owner: { rule: 'self', doing: 'change the passwords of' }, allowWhileMustChange: (req, actor) => sameUserId(req.params.userId, actor.userId) },
    params: UserIdParams,
    subject: (req) => ({ userId: req.params.userId }),
    body: PasswordChangeRequest,
    responses: {
      200: { description: 'Changed; own changes carry a fresh token', schema: UserResult },
      400: { description: 'Invalid password or id' },
      404: { description: 'No such user' },
    },
    errorFields: userResult,
    audit: { action: 'user.password_changed', target: (req) => req.params.userId },
    handler: async (req, services) => ({ body: await changePassword(services, req.actor!, req.params.userId, req.body.password) }),
  }),
  endpoint({
    method: 'DELETE',
    path: '/v1/users/{userId}',
    summary: 'Delete a user (administrators); revokes its tokens',
    tags: ['user'],
    access: { role: 'ROLE_ADMIN', purpose: ACCOUNTS },
    params: UserIdParams,
    responses: {
      204: { description: 'Deleted' },
      404: { description: 'No such user' },
      409: { description: 'The last administrator' },
    },
    audit: { action: 'user.deleted', target: (req) => req.params.userId },
    handler: async (req, services) => {
      await deleteUser(services, req.params.userId);
      return { status: 204 };
    },
  }),
];
