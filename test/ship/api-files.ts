// The shipped API description and request collections, as the ship tests read them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const OPENAPI_FILE = `${ROOT}public/api/openapi.yaml`;
export const COLLECTION_FILE = `${ROOT}public/api/repoadmin.postman_collection.json`;
export const HTTP_FILE = `${ROOT}public/api/repoadmin.http`;

/** Every operation of the OpenAPI file as "METHOD /path/{param}". */
export function openApiOperations(): string[] {
  const doc = parse(readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
}

/** Whether a concrete request path, with `{{variables}}` for its parameters, is that of an OpenAPI path template. */
export function matchesTemplate(template: string, path: string): boolean {
  const pattern = template
    .split('/')
    .map((segment) => (/^\{\w+\}$/.test(segment) ? '\\{\\{\\w+\\}\\}' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${pattern}$`).test(path);
}

/** The operations a list of requests leaves out. */
export function uncovered(requests: { method: string; path: string }[]): string[] {
  return openApiOperations().filter((operation) => {
    const [method, template] = operation.split(' ') as [string, string];
    return !requests.some((r) => r.method === method && matchesTemplate(template, r.path));
  });
}
