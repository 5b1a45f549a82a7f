// Parses input with a shared schema; every problem becomes a precise `errors[].path`.
import type * as z from 'zod';
import { refusalOf, validationError } from '../../common/validation.js';

export function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationError(refusalOf(schema, value, result.error));
}

/**
 * Parses a query string. A parameter given twice (`?page=1&page=2`, which Koa reads as an array) is
 * a 400 of its own rather than a puzzling "must be a number".
 */
export function parseQuery<S extends z.ZodType>(schema: S, query: Record<string, string | string[] | undefined>): z.output<S> {
  const repeated = Object.keys(query).filter((name) => Array.isArray(query[name]));
  if (repeated.length > 0) {
    throw validationError(repeated.map((path) => ({ path, message: 'given more than once' })));
  }
  return parse(schema, query);
}
