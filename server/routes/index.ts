// Every endpoint of the server, in the order of the OpenAPI document, and the two forms of that
// document (which are not in it).
import { endpoint } from '../http/endpoint.js';
import { openApiDocument, openApiYaml } from '../openapi.js';
import { operationEndpoints } from './health.js';
import { auditEndpoints } from './v1/audit.js';
import { authenticationEndpoints } from './v1/authentication.js';
import { environmentEndpoints } from './v1/environments.js';
import { eventEndpoints } from './v1/events.js';
import { repositoryEndpoints } from './v1/repositories.js';
import { retentionEndpoints } from './v1/retention.js';
import { tokenEndpoints } from './v1/tokens.js';
import { trashEndpoints } from './v1/trash.js';
import { trustEndpoints } from './v1/trust.js';
import { userEndpoints } from './v1/users.js';
import { webhookEndpoints } from './v1/webhooks.js';

/** The endpoints the API description describes. */
export const API_ENDPOINTS = [
  ...authenticationEndpoints,
  ...userEndpoints,
  ...repositoryEndpoints,
  ...trashEndpoints,
  ...environmentEndpoints,
  ...retentionEndpoints,
  ...tokenEndpoints,
  ...trustEndpoints,
  ...eventEndpoints,
  ...webhookEndpoints,
  ...auditEndpoints,
  ...operationEndpoints,
];

const descriptionEndpoints = [
  endpoint({
    method: 'GET',
    path: '/swagger.yaml',
    summary: 'This API description in YAML',
    tags: ['operations'],
    access: 'public',
    responses: { 200: { description: 'OpenAPI 3.1', contentType: 'application/yaml' } },
    handler: () => ({ text: { type: 'application/yaml', body: openApiYaml(API_ENDPOINTS) } }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/openapi.json',
    summary: 'This API description in JSON',
    tags: ['operations'],
    access: 'public',
    responses: { 200: { description: 'OpenAPI 3.1' } },
    handler: () => ({ body: openApiDocument(API_ENDPOINTS) }),
  }),
];

export const ENDPOINTS = [...API_ENDPOINTS, ...descriptionEndpoints];
