// Every endpoint of the API, in the order of the OpenAPI document.
import type { Endpoint } from './endpoint.js';
import { operationEndpoints } from './health.js';
import { authenticationEndpoints } from './v1/authentication.js';
import { repositoryEndpoints } from './v1/repositories.js';
import { tokenEndpoints } from './v1/tokens.js';
import { userEndpoints } from './v1/users.js';

export const ENDPOINTS: readonly Endpoint[] = [
  ...authenticationEndpoints,
  ...userEndpoints,
  ...repositoryEndpoints,
  ...tokenEndpoints,
  ...operationEndpoints,
];
