import { describe, expect, it } from 'vitest';
import { formatCreationDate, parseCreationDate } from './dates.js';

describe('parseCreationDate', () => {
  it('reads the shapes of docs/api.md', () => {
    for (const text of ['2019-03-02T20:30:35.420+0000', '2019-03-02T20:30:35.420+00:00', '2019-03-02T20:30:35.420Z', '2019-03-02T21:30:35.420+0100']) {
      expect(formatCreationDate(parseCreationDate(text)!)).toBe('2019-03-02T20:30:35.420+0000');
    }
    expect(parseCreationDate('2019-03-02T20:30:35.420')).toBeNull();
    expect(parseCreationDate('2019-02-30T20:30:35Z')).toBeNull();
  });

  it('keeps to the years 1000 to 9999 in UTC, which every database driver writes correctly', () => {
    expect(formatCreationDate(parseCreationDate('9999-12-31T23:59:59.999Z')!)).toBe('9999-12-31T23:59:59.999+0000');
    expect(formatCreationDate(parseCreationDate('1000-01-01T00:00:00Z')!)).toBe('1000-01-01T00:00:00.000+0000');
    expect(parseCreationDate('9999-12-31T23:59:59.999-18:00')).toBeNull();
    expect(parseCreationDate('1000-01-01T00:00:00+0100')).toBeNull();
    expect(parseCreationDate('0100-01-01T00:00:00+1800')).toBeNull();
    expect(parseCreationDate('0999-06-01T00:00:00Z')).toBeNull();
  });
});
