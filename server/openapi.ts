// The machine-readable description, generated from the endpoint declarations the pipeline runs and
// the schemas they validate with.
import * as z from 'zod';
import { stringify } from 'yaml';
import '../common/schemas/index.js';
import { VERSION } from '../common/version.js';
import type { Endpoint } from './http/endpoint.js';
import { refusals } from './policy/access.js';

type Json = Record<string, unknown>;

const ERROR_BODY = { $ref: '#/components/schemas/ErrorBody' };

/** The schema's registered id, looking through transforms to the schema they read. */
function idOf(schema: z.ZodType): string | undefined {
  let current: z.ZodType | undefined = schema;
  while (current) {
    const id = z.globalRegistry.get(current)?.id;
    if (id) return id;
    const def: { type: string; in?: z.ZodType } = (current as unknown as { _zod: { def: { type: string; in?: z.ZodType } } })._zod.def;
    current = def.type === 'pipe' ? def.in : undefined;
  }
  return undefined;
}

function schemaOf(schema: z.ZodType): Json {
  const id = idOf(schema);
  if (id) return { $ref: `#/components/schemas/${id}` };
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  delete json.$schema;
  return json;
}

/** The fields of an object schema (looking through transforms), each with whether it is required. */
function fieldsOf(schema: z.ZodType | undefined): [string, z.ZodType, boolean][] {
  let current: z.ZodType | undefined = schema;
  while (current) {
    const def: { type: string; in?: z.ZodType; shape?: Record<string, z.ZodType> } = (current as unknown as { _zod: { def: typeof def } })._zod.def;
    if (def.type === 'object') {
      return Object.entries(def.shape!).map(([name, field]) => [name, field, !field.safeParse(undefined).success]);
    }
    current = def.type === 'pipe' ? def.in : undefined;
  }
  return [];
}

function security(endpoint: Endpoint): Json[] {
  if (endpoint.access === 'public') return [{}];
  if (endpoint.access === 'reader') return [{}, { bearer: [] }];
  return [{ bearer: [] }];
}

/**
 * The endpoint's answers with its 401 and 403 derived from its access rule (server/policy/access.ts,
 * `refusals`). Only a public endpoint states its own: there they are the handler's verdict on what
 * the body proves (a password, an ID token), not an access rule.
 */
function answers(endpoint: Endpoint): Endpoint['responses'] {
  if (endpoint.access === 'public') return endpoint.responses;
  const stated = [401, 403].filter((status) => status in endpoint.responses);
  if (stated.length > 0) throw new Error(`${endpoint.method} ${endpoint.path} states its own ${stated.join(' and ')}: they derive from its access rule`);
  const derived = Object.entries(refusals(endpoint.access)).map(([status, description]) => [status, { description }] as const);
  return Object.fromEntries([...Object.entries(endpoint.responses), ...derived].sort(([a], [b]) => Number(a) - Number(b)));
}

function operation(endpoint: Endpoint): Json {
  const parameters: Json[] = [
    ...fieldsOf(endpoint.params).map(([name, field]) => ({ name, in: 'path', required: true, schema: schemaOf(field) })),
    ...(endpoint.queryDoc ??
      fieldsOf(endpoint.query).map(([name, field, required]) => ({ name, in: 'query', ...(required ? { required } : {}), schema: schemaOf(field) }))),
  ];
  const responses: Json = {};
  for (const [status, response] of Object.entries(answers(endpoint))) {
    let content: Json | undefined;
    if (response.contentType) content = { [response.contentType]: { schema: { type: 'string' } } };
    else if (response.schema) content = { 'application/json': { schema: schemaOf(response.schema) } };
    else if (Number(status) >= 400) content = { 'application/json': { schema: ERROR_BODY } };
    responses[status] = { description: response.description, ...(content ? { content } : {}) };
  }
  return {
    tags: endpoint.tags,
    summary: endpoint.summary,
    ...(endpoint.description ? { description: endpoint.description } : {}),
    security: security(endpoint),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(endpoint.body
      ? { requestBody: { required: !endpoint.bodyOptional, content: { 'application/json': { schema: schemaOf(endpoint.body) } } } }
      : {}),
    responses,
  };
}

const documents = new WeakMap<readonly Endpoint[], Json>();

export function openApiDocument(endpoints: readonly Endpoint[]): Json {
  const known = documents.get(endpoints);
  if (known) return known;
  const paths: Record<string, Json> = {};
  for (const endpoint of endpoints) paths[endpoint.path] = { ...paths[endpoint.path], [endpoint.method.toLowerCase()]: operation(endpoint) };
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    io: 'input',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  for (const schema of Object.values(schemas)) delete schema.$schema;
  // In name order: the registry holds them in the order their modules were first imported, which
  // differs between the server and `npm run openapi`.
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : 1)));
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'repoadmin',
      version: VERSION,
      description: 'A build-pipeline version registry: pipelines publish artifact versions, people and tools search them.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(endpoints.flatMap((e) => e.tags))].map((name) => ({ name })),
    paths,
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
  documents.set(endpoints, document);
  return document;
}

export function openApiYaml(endpoints: readonly Endpoint[]): string {
  return stringify(openApiDocument(endpoints), { aliasDuplicateObjects: false });
}
