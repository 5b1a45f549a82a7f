// The one rendering of a schema's refusal: each zod issue as a field error (`path`, `message`), and
// the field errors joined into one message. The server answers with it; the command line checks a
// request with the same words before sending it.
import type * as z from 'zod';
import { AppError, type FieldError } from './errors.js';

/** `artifact.version`, `projects[2]`. */
function pathOf(path: PropertyKey[]): string {
  return path.reduce<string>((acc, part) => {
    if (typeof part === 'number') return `${acc}[${part}]`;
    return acc === '' ? String(part) : `${acc}.${String(part)}`;
  }, '');
}

/** The issues of a parse made with `reportInput`, which tells a missing field from a wrong one. */
function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => {
    const path = pathOf(issue.path);
    const missing = (issue as { input?: unknown }).input === undefined;
    if (missing && ['invalid_type', 'invalid_value', 'invalid_union'].includes(issue.code)) return { path, message: 'required' };
    if (issue.code === 'invalid_type') return { path, message: `must be a ${issue.expected}` };
    if (issue.code === 'invalid_value') return { path, message: `must be one of ${issue.values.map((v) => String(v)).join(', ')}` };
    return { path, message: issue.message };
  });
}

/** `path: message; path: message`. */
export function joinFieldErrors(errors: FieldError[]): string {
  return errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join('; ');
}

/** A validation error of these field errors. */
export function validationError(errors: FieldError[]): AppError {
  return new AppError('validation', joinFieldErrors(errors), { errors });
}

/**
 * Why `value` does not fit `schema`, once a parse has failed: parsed again with each issue's input
 * (asked for on every parse, it would cost a valid one zod's compiled fast path).
 */
export function refusalOf(schema: z.ZodType, value: unknown, failed: z.ZodError): FieldError[] {
  return fieldErrors(schema.safeParse(value, { reportInput: true }).error ?? failed);
}
