// Building blocks shared by the request and response schemas.
import * as z from 'zod';
import { parseCreationDate } from '../dates.js';

/**
 * A UUID in its canonical 8-4-4-4-12 hexadecimal form (any version, as older ids are v4 or v1), in
 * lower case from here on: ids are compared as text, and MariaDB stores them as text.
 */
export const Uuid = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID')
  .toLowerCase()
  .meta({ format: 'uuid', example: '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd' });

/** A date-time with an offset (common/dates.ts), handed on as the Date it names: parsed once, here. */
export function offsetDateTime(message: string) {
  return z.string().transform((s, ctx) => {
    const date = parseCreationDate(s);
    if (date) return date;
    ctx.addIssue({ code: 'custom', message, input: s });
    return z.NEVER;
  });
}

/** PostgreSQL text cannot hold the NUL character: strings that are stored or searched must not have one. */
// eslint-disable-next-line no-control-regex -- refuses the NUL character, on purpose
export const NO_NUL = /^[^\u0000]*$/;
export const NO_NUL_MESSAGE = 'must not contain NUL characters';

/** A non-empty string of at most `max` characters, without NUL. */
export function text(max: number) {
  return z.string().min(1, 'must not be empty').max(max, `at most ${max} characters`).regex(NO_NUL, NO_NUL_MESSAGE);
}

/** A boolean; older clients also send "true" and "false" as strings. */
export const LooseBoolean = z.preprocess(
  (v) => (v === 'true' ? true : v === 'false' ? false : v),
  z.boolean(),
);

/** ISO 8601 in UTC with milliseconds and `Z`. */
export const Timestamp = z.string().meta({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

/** Where a page stands among all the matches: the paging fields every paged answer carries. */
export const PageInfo = z.object({
  totalElements: z.number().int(),
  totalPages: z.number().int(),
  /** 1-based. */
  currentPage: z.number().int(),
  numberOfElements: z.number().int(),
});
export type PageInfo = z.infer<typeof PageInfo>;

/** The paging fields of the page `request` asked for, of `total` matches, holding `numberOfElements`: every paged answer's. */
export function pageInfo(total: number, request: { page: number; size: number }, numberOfElements: number): PageInfo {
  return { totalElements: total, totalPages: Math.ceil(total / request.size), currentPage: request.page, numberOfElements };
}
