// The machine-readable description, generated from the endpoints the router serves and the
// schemas they validate with.
import * as z from 'zod';
import { stringify } from 'yaml';
import '../common/schemas/index.js';
import { VERSION } from '../common/version.js';
import { openApiPath } from './routes/endpoint.js';
import { ENDPOINTS } from './routes/index.js';

/** The paths of the document, from the same list the router is built from. */
function paths(): Record<string, Record<string, unknown>> {
  const result: Record<string, Record<string, unknown>> = {};
  for (const endpoint of ENDPOINTS) {
    const path = openApiPath(endpoint.path);
    result[path] = { ...result[path], [endpoint.method]: endpoint.doc };
  }
  return result;
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
