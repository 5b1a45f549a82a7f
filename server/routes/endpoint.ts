// One declaration per endpoint: method, path, its OpenAPI operation (which names the request and
// response schemas the handler parses with and answers in) and the handlers, auth first. The router
// (server/app.ts) and the OpenAPI document (server/openapi.ts) are both built from the list.
import type { Middleware } from 'koa';
import * as z from 'zod';
import type { Services } from '../services/context.js';

export type Method = 'get' | 'post' | 'put' | 'delete';

export interface Endpoint {
  method: Method;
  /** The router's form, `/v1/users/:userId`; the document writes `/v1/users/{userId}`. */
  path: string;
  /** The OpenAPI operation object: tags, summary, security, parameters, request body, responses. */
  doc: Record<string, unknown>;
  /** Called once at start-up: the auth check and the handler, as the router runs them. */
  handlers(services: Services): Middleware[];
  /** Served only when this holds (`/metrics` with REPO_MAN_METRICS=false is not). */
  enabled?(services: Services): boolean;
}

/** The OpenAPI path of a router path. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/** A reference to a schema of common/schemas by its registered id: the one the handler parses with. */
export function ref(schema: z.ZodType): { $ref: string } {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error('a schema named in an endpoint needs .meta({ id })');
  return { $ref: `#/components/schemas/${id}` };
}

export const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema: ref(schema) } } });
export const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } });
export const bearer = [{ bearer: [] }];
export const publicOrBearer = [{}, { bearer: [] }];
export const open = [{}];
export const query = (name: string, schema: object, description: string) => ({ name, in: 'query', schema, description });
export const uuidPath = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string', format: 'uuid' } });
