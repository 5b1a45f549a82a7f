// The project token endpoints: make, list, revoke. Session tokens only: a project token cannot make more.
import {
  ProjectTokenCreateRequest,
  ProjectTokenCreated,
  ProjectTokenIdParams,
  ProjectTokenList,
  ProjectTokenListQuery,
  ProjectTokenRevokeAllQuery,
  ProjectTokensRevoked,
} from '../../../common/schemas/tokens.js';
import { endpoint } from '../../http/endpoint.js';
import { ACCOUNTS } from '../../policy/access.js';
import { createProjectToken, listProjectTokens, revokeAllProjectTokens, revokeProjectToken, tokenOf } from '../../services/tokens.js';

export const tokenEndpoints = [
  endpoint({
    method: 'POST',
    path: '/v1/tokens',
    summary: 'Make a project token (shown once; the server keeps its SHA-256 only)',
    description:
      'Session tokens only, and a fresh login: a session token issued in the last 15 minutes, or the caller\'s password in `password` ' +
      '(checked as a login is, within the same limits). Otherwise 401 with `reason: fresh_login_required`. ' +
      'userId: administrators may name any user; others only themselves.',
    tags: ['token'],
    access: { purpose: ACCOUNTS, owner: { rule: 'self', doing: 'make the tokens of' }, freshLogin: true },
    body: ProjectTokenCreateRequest,
    subject: (req) => ({ userId: req.body.userId }),
    responses: {
      201: { description: 'Made; the answer is the only place the token appears', schema: ProjectTokenCreated },
      400: { description: 'Invalid request' },
      404: { description: 'No such user' },
      409: { description: 'The user has a token of that name, or 100 active tokens already' },
      429: { description: 'A password was sent, and too many logins of the caller (or from its address) failed; see Retry-After' },
    },
    audit: { action: 'token.created', target: (req) => req.body.userId ?? req.actor?.userId },
    handler: async (req, services) => {
      const { created, freshLogin } = await createProjectToken(services, req.actor!, req.allowed!, req.body, req.address);
      // The token's id, as token.revoked names it (a key the audit's filter of secret-looking keys keeps).
      return { status: 201, body: created, audit: { details: { tokenId: created.id, name: created.name, scope: created.scope, freshLogin } } };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/tokens',
    summary: "A page of the caller's project tokens; administrators see all, or one user's",
    description: 'By user name, then token name. Paged as the search is (`page` from 1, `size` 1 to 100), but 100 a page unless `size` says otherwise.',
    tags: ['token'],
    access: { purpose: ACCOUNTS, owner: { rule: 'self', doing: 'list the tokens of', everyone: true } },
    query: ProjectTokenListQuery,
    subject: (req) => ({ userId: req.query.userId }),
    responses: {
      200: { description: 'The tokens, without their secrets', schema: ProjectTokenList },
      400: { description: 'userId is not a UUID, or invalid paging' },
      404: { description: 'No such user' },
    },
    handler: async (req, services) => ({ body: await listProjectTokens(services, req.actor!, req.allowed, req.query) }),
  }),
  endpoint({
    method: 'DELETE',
    path: '/v1/tokens',
    summary: "Revoke all of a user's project tokens (the user or an administrator), as after a leaked password",
    tags: ['token'],
    access: { purpose: ACCOUNTS, owner: { rule: 'self', doing: 'revoke the tokens of' } },
    query: ProjectTokenRevokeAllQuery,
    subject: (req) => ({ userId: req.query.userId }),
    responses: {
      200: { description: 'Revoked; how many', schema: ProjectTokensRevoked },
      400: { description: 'userId is missing or not a UUID' },
      404: { description: 'No such user' },
    },
    audit: { action: 'token.revoked', target: (req) => req.query.userId },
    handler: async (req, services) => {
      const revoked = await revokeAllProjectTokens(services, req.allowed!);
      return { body: { revoked }, audit: { details: { all: true, revoked } } };
    },
  }),
  endpoint({
    method: 'DELETE',
    path: '/v1/tokens/{id}',
    summary: 'Revoke a project token (its owner or an administrator)',
    tags: ['token'],
    // Another user's token is not found rather than forbidden: its id tells nothing.
    access: { purpose: ACCOUNTS, owner: { rule: 'self', doing: 'revoke the tokens of', hiddenAs: (params) => `no token with id ${params.id}` } },
    params: ProjectTokenIdParams,
    subject: (req, services) => tokenOf(services, req.params.id),
    responses: {
      204: { description: 'Revoked' },
      400: { description: 'Not a UUID' },
      404: { description: "No such token, or another user's" },
    },
    audit: { action: 'token.revoked', target: (req) => req.params.id },
    handler: async (req, services) => {
      await revokeProjectToken(services, req.params.id);
      return { status: 204 };
    },
  }),
];
