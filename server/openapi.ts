// The machine-readable description, generated from the schemas the server validates with.
import { z } from 'zod';
import { stringify } from 'yaml';
import '../common/schemas/index.js';
import { PAGE_SIZE_MAX, SORT_FIELDS } from '../common/schemas/repositories.js';
import { VERSION } from '../common/version.js';

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (id: string) => ({ content: { 'application/json': { schema: ref(id) } } });
const error = (description: string) => ({ description, ...json('ErrorBody') });
const bearer = [{ bearer: [] }];
const publicOrBearer = [{}, { bearer: [] }];

const USER_ID = { name: 'userId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const query = (name: string, schema: object, description: string) => ({ name, in: 'query', schema, description });

function paths() {
  return {
    '/v1/authentication/generate-token': {
      post: {
        tags: ['authentication'],
        summary: 'Exchange a user name and password for a token',
        requestBody: { required: true, ...json('TokenRequest') },
        responses: {
          200: { description: 'A new token', ...json('TokenResponse') },
          400: error('Invalid request'),
          401: error('Wrong user name or password'),
          429: error('Too many failed attempts; see Retry-After'),
        },
      },
    },
    '/v1/users': {
      post: {
        tags: ['user'],
        summary: 'Create a user (administrators)',
        security: bearer,
        requestBody: { required: true, ...json('UserCreateRequest') },
        responses: {
          201: { description: 'Created', ...json('UserResult') },
          400: error('Invalid request; the body has valid: false'),
          401: error('No valid token'),
          403: error('Not an administrator, or a project token'),
          409: error('The user name is taken; the body has valid: false'),
        },
      },
      get: {
        tags: ['user'],
        summary: 'List users (administrators)',
        security: bearer,
        responses: { 200: { description: 'All users', ...json('UserList') }, 401: error('No valid token'), 403: error('Not an administrator, or a project token') },
      },
    },
    '/v1/users/me': {
      get: {
        tags: ['user'],
        summary: 'The user of the token',
        security: bearer,
        responses: { 200: { description: 'The user', ...json('Me') }, 401: error('No valid token') },
      },
    },
    '/v1/users/{userId}/password': {
      put: {
        tags: ['user'],
        summary: 'Change a password (own, or any for administrators); revokes earlier tokens',
        security: bearer,
        parameters: [USER_ID],
        requestBody: { required: true, ...json('PasswordChangeRequest') },
        responses: {
          200: { description: 'Changed; own changes carry a fresh token', ...json('UserResult') },
          400: error('Invalid password or id'),
          401: error('No valid token'),
          403: error('Not allowed (another user, or a project token)'),
          404: error('No such user'),
        },
      },
    },
    '/v1/users/{userId}': {
      delete: {
        tags: ['user'],
        summary: 'Delete a user (administrators); revokes its tokens',
        security: bearer,
        parameters: [USER_ID],
        responses: {
          204: { description: 'Deleted' },
          401: error('No valid token'),
          403: error('Not an administrator, or a project token'),
          404: error('No such user'),
          409: error('The last administrator'),
        },
      },
    },
    '/v1/repositories': {
      post: {
        tags: ['repository'],
        summary: 'Store a version record (replaces the record of the same coordinates)',
        security: bearer,
        requestBody: { required: true, ...json('VersionRecord') },
        responses: {
          200: { description: 'Replaced', ...json('PublishResult') },
          201: { description: 'Created', ...json('PublishResult') },
          400: error('Invalid record'),
          401: error('No valid token'),
          403: error('Another project, or a project token of the scope read'),
        },
      },
    },
    '/v1/repositories/search': {
      post: {
        tags: ['repository'],
        summary: 'Search version records; `*` is a wildcard',
        security: publicOrBearer,
        parameters: [
          query('page', { type: 'integer', minimum: 0, default: 1 }, 'page number, from 1'),
          query('size', { type: 'integer', minimum: 1, maximum: PAGE_SIZE_MAX, default: 10 }, 'page size'),
          query('aPage', { type: 'integer', minimum: 0 }, 'older clients: page number from 0'),
          query('aSize', { type: 'integer', minimum: 1 }, 'older clients: page size (over 100 reads as 100)'),
          query('sortField', { type: 'string', enum: [...SORT_FIELDS] }, 'sort field; version sorts version-aware'),
          query('sortDirection', { type: 'string', enum: ['ASC', 'DESC'] }, 'sort direction (any case)'),
        ],
        requestBody: { required: false, ...json('SearchRequest') },
        responses: { 200: { description: 'Matches', ...json('SearchResult') }, 400: error('Invalid filter or paging'), 401: error('A token is required on this server') },
      },
    },
    '/v1/repositories/latest': {
      get: {
        tags: ['repository'],
        summary: 'The latest version of an artifact',
        security: publicOrBearer,
        parameters: [
          { ...query('groupId', { type: 'string' }, 'group'), required: true },
          { ...query('artifactId', { type: 'string' }, 'artifact'), required: true },
          query('branch', { type: 'string' }, 'branch'),
          query('projectName', { type: 'string' }, 'project'),
        ],
        responses: { 200: { description: 'The record', ...json('VersionInformation') }, 404: error('None') },
      },
    },
    '/v1/repositories/{uid}': {
      get: {
        tags: ['repository'],
        summary: 'One version record',
        security: publicOrBearer,
        parameters: [{ name: 'uid', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
        responses: { 200: { description: 'The record', ...json('VersionInformation') }, 400: error('Not a UUID'), 404: error('None') },
      },
    },
    '/v1/tokens': {
      post: {
        tags: ['token'],
        summary: 'Make a project token (shown once; the server keeps its SHA-256 only)',
        description: 'Session tokens only. userId: administrators may name any user; others only themselves.',
        security: bearer,
        requestBody: { required: true, ...json('ProjectTokenCreateRequest') },
        responses: {
          201: { description: 'Made; the answer is the only place the token appears', ...json('ProjectTokenCreated') },
          400: error('Invalid request'),
          401: error('No valid token'),
          403: error('A project token, another user (not an administrator), or a password that must be changed'),
          404: error('No such user'),
          409: error('The user has a token of that name'),
        },
      },
      get: {
        tags: ['token'],
        summary: "The caller's project tokens; administrators see all, or one user's",
        security: bearer,
        parameters: [query('userId', { type: 'string', format: 'uuid' }, 'only this user\'s tokens (administrators: anyone)')],
        responses: {
          200: { description: 'The tokens, without their secrets', ...json('ProjectTokenList') },
          400: error('userId is not a UUID'),
          401: error('No valid token'),
          403: error('A project token, or another user (not an administrator)'),
          404: error('No such user'),
        },
      },
    },
    '/v1/tokens/{id}': {
      delete: {
        tags: ['token'],
        summary: 'Revoke a project token (its owner or an administrator)',
        security: bearer,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
        responses: {
          204: { description: 'Revoked' },
          400: error('Not a UUID'),
          401: error('No valid token'),
          403: error('A project token'),
          404: error("No such token, or another user's"),
        },
      },
    },
    '/health': { get: { tags: ['operations'], summary: 'The process is up', security: [{}], responses: { 200: { description: 'Up' } } } },
    '/health/ready': {
      get: { tags: ['operations'], summary: 'The database answers', security: [{}], responses: { 200: { description: 'Ready' }, 503: error('Database unreachable') } },
    },
    '/metrics': {
      get: {
        tags: ['operations'],
        summary: 'Prometheus metrics (absent when REPO_MAN_METRICS=false)',
        security: [{}],
        responses: { 200: { description: 'The Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
  };
}

let cached: Record<string, unknown> | undefined;

export function openApiDocument(): Record<string, unknown> {
  if (cached) return cached;
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    io: 'input',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Record<string, unknown>> };
  for (const schema of Object.values(schemas)) delete schema.$schema;
  // In name order: the registry holds them in the order their modules were first imported, which
  // differs between the server and `npm run openapi`.
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : 1)));
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'repoadmin',
      version: VERSION,
      description: 'A build-pipeline version registry: pipelines publish artifact versions, people and tools search them.',
    },
    servers: [{ url: '/' }],
    tags: [{ name: 'authentication' }, { name: 'user' }, { name: 'repository' }, { name: 'token' }, { name: 'operations' }],
    paths: paths(),
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A session token (JWT) from generate-token, or a project token (rpa_...) from POST /v1/tokens within its scope',
        },
      },
      schemas: sorted,
    },
  };
  return cached;
}

export function openApiYaml(): string {
  return stringify(openApiDocument(), { aliasDuplicateObjects: false });
}
