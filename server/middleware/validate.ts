// Parses input with a shared schema; every problem becomes a precise `errors[].path`.
import type { z } from 'zod';
import { AppError, type FieldError } from '../../common/errors.js';

function pathOf(path: PropertyKey[]): string {
  return path.reduce<string>((acc, part) => {
    if (typeof part === 'number') return `${acc}[${part}]`;
    return acc === '' ? String(part) : `${acc}.${String(part)}`;
  }, '');
}

export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => {
    if (issue.code === 'invalid_type') {
      const missing = (issue as { input?: unknown }).input === undefined;
      return { path: pathOf(issue.path), message: missing ? 'required' : `must be a ${issue.expected}` };
    }
    return { path: pathOf(issue.path), message: issue.message };
  });
}

export function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const errors = fieldErrors(result.error);
  const message = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join('; ');
  throw new AppError('validation', message, { errors });
}
