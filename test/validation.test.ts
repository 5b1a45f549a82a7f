// The one rendering of a schema's refusal, as the server answers it and the command line shows it.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { checkRequest } from '../cli/commands/support.js';
import { parse } from '../server/http/validate.js';
import { joinFieldErrors, refusalOf } from '../common/validation.js';

const Schema = z.object({ name: z.string().max(3, 'at most 3 characters'), kind: z.enum(['a', 'b']), tags: z.array(z.string()).optional() });

const refusal = (value: unknown) => refusalOf(Schema, value, Schema.safeParse(value).error!);

describe('refusalOf', () => {
  it('says required for a missing field, the type or the values for a wrong one, the schema\'s words otherwise', () => {
    expect(refusal({ kind: 'c', tags: ['x', 2] })).toEqual([
      { path: 'name', message: 'required' },
      { path: 'kind', message: 'must be one of a, b' },
      { path: 'tags[1]', message: 'must be a string' },
    ]);
    expect(refusal({ name: 'long', kind: 'a' })).toEqual([{ path: 'name', message: 'at most 3 characters' }]);
    expect(joinFieldErrors(refusal({ name: 1, kind: 'a' }))).toBe('name: must be a string');
  });

  it('is what the server answers and what the command line shows, under the flag names', () => {
    const value = { kind: 'c' };
    let server: unknown;
    try {
      parse(Schema, value);
    } catch (error) {
      server = error;
    }
    expect(server).toMatchObject({ code: 'validation', message: 'name: required; kind: must be one of a, b' });
    expect(() => checkRequest(Schema, value, { name: '--name', kind: '--kind' })).toThrow('--name: required; --kind: must be one of a, b');
  });
});
