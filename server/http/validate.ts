// Parses input with a shared schema; every problem becomes a precise `errors[].path`.
import type * as z from 'zod';
import { AppError, type FieldError } from '../../common/errors.js';

function pathOf(path: PropertyKey[]): string {
  return path.reduce<string>((acc, part) => {
    if (typeof part === 'number') return `${acc}[${part}]`;
    return acc === '' ? String(part) : `${acc}.${String(part)}`;
  }, '');
}

export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => {
    const path = pathOf(issue.path);
    const missing = (issue as { input?: unknown }).input === undefined;
    if (missing && ['invalid_type', 'invalid_value', 'invalid_union'].includes(issue.code)) return { path, message: 'required' };
    if (issue.code === 'invalid_type') return { path, message: `must be a ${issue.expected}` };
    if (issue.code === 'invalid_value') return { path, message: `must be one of ${issue.values.map((v) => String(v)).join(', ')}` };
    return { path, message: issue.message };
  });
}

export function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // Again with each issue's input, which tells a missing field from a wrong one: asked for on every
  // parse, it cost a latest lookup's query about 3 µs more (zod leaves its compiled fast path).
  const errors = fieldErrors(schema.safeParse(value, { reportInput: true }).error ?? result.error);
  const message = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join('; ');
  throw new AppError('validation', message, { errors });
}

/**
 * Parses a query string. A parameter given twice (`?page=1&page=2`, which Koa reads as an array) is
 * a 400 of its own rather than a puzzling "must be a number".
 */
export function parseQuery<S extends z.ZodType>(schema: S, query: Record<string, string | string[] | undefined>): z.output<S> {
  const repeated = Object.keys(query).filter((name) => Array.isArray(query[name]));
  if (repeated.length > 0) {
    const errors = repeated.map((path) => ({ path, message: 'given more than once' }));
    throw new AppError('validation', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
  }
  return parse(schema, query);
}
