// The date forms of the version record: what publish accepts and the one shape search answers with.

/**
 * The years a creation date may fall in, in UTC. The database drivers write dates with other year
 * lengths wrongly (PGlite stores 0099 as 1999) or not at all (10000), and no build is that old.
 */
export const CREATION_YEAR_MIN = 1000;
export const CREATION_YEAR_MAX = 9999;

const CREATION_DATE =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * Parses `2019-03-02T20:30:35.420+0000`, also with `+00:00`, `Z` or without milliseconds.
 * A date without an offset is ambiguous and gives null, as does an impossible one (Feb 30) and one
 * outside the years 1000 to 9999 in UTC.
 */
export function parseCreationDate(text: string): Date | null {
  const m = CREATION_DATE.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const millis = Number(frac.padEnd(3, '0').slice(0, 3));
  const local = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const check = new Date(local);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) {
    return null;
  }
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2, 4));
    if (oh > 18 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const date = new Date(local - offsetMinutes * 60_000);
  const utcYear = date.getUTCFullYear();
  return utcYear < CREATION_YEAR_MIN || utcYear > CREATION_YEAR_MAX ? null : date;
}

/** `2019-03-02T20:30:35.420+0000`, in UTC: the shape of the specification. */
export function formatCreationDate(date: Date): string {
  return date.toISOString().replace('Z', '+0000');
}

/** ISO 8601 in UTC with milliseconds and `Z`, for every other timestamp. */
export function formatTimestamp(date: Date): string {
  return date.toISOString();
}
