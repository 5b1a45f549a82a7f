// The one error body every route answers with (docs/api.md, "Errors").
import * as z from 'zod';
import { ERROR_REASONS, WIRE_ERROR_CODES } from '../errors.js';

export const ErrorBody = z
  .object({
    _status: z.literal(false),
    _message: z.object({
      category: z.literal('ERROR'),
      code: z.enum(WIRE_ERROR_CODES),
      message: z.string(),
    }),
    /** Field problems, only for `validation`. */
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    /** Why the request was refused although its token was accepted (ERROR_REASONS: POST /v1/tokens, DELETE /v1/repositories/{uid}). */
    reason: z.enum(ERROR_REASONS).optional(),
    /** Only on the user routes. */
    valid: z.literal(false).optional(),
    /** Only on the user routes; null when unknown. */
    userId: z.string().nullable().optional(),
  })
  .meta({ id: 'ErrorBody' });
export type ErrorBody = z.infer<typeof ErrorBody>;
