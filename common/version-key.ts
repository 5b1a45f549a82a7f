// A text key per version string whose byte order (COLLATE "C") is the version order of
// docs/api.md ("Version order"), so the database sorts by version without any sorting in JavaScript.
//
// Key = release part, '!', qualifier rank, qualifier tokens, '!'.
// - Release: numbers joined by '.', trailing zeros dropped (1.0 = 1.0.0), each number written as
//   two digits of length then its digits, so 9 < 10 and a shorter release sorts first ('!' < '.').
// - Rank: alpha 1, beta 2, milestone 3, rc 4, unknown 5, snapshot 6, none (a release) 9.

const RANKS: Record<string, string> = {
  alpha: '1',
  a: '1',
  beta: '2',
  b: '2',
  milestone: '3',
  m: '3',
  rc: '4',
  cr: '4',
  snapshot: '6',
  final: '9',
  ga: '9',
  release: '9',
};
/** The length of the version_key column. */
export const VERSION_KEY_MAX = 400;
const UNKNOWN_RANK = '5';
const RELEASE_RANK = '9';
const END = '!';

function numberKey(digits: string): string {
  const trimmed = digits.replace(/^0+/, '').slice(0, 99);
  return String(trimmed.length).padStart(2, '0') + trimmed;
}

/** Splits `rc.1`, `RC2`, `beta-11` into words and numbers: ['rc', 1]. */
function tokens(qualifier: string): string[] {
  return qualifier.toLowerCase().match(/[a-z]+|[0-9]+|[^a-z0-9.\-_]+/g) ?? [];
}

/**
 * Cuts a key to the column's length, in code points. A prefix keeps the byte order of the keys it
 * is cut from (a < b gives cut(a) <= cut(b)), and 400 characters decide any real version.
 */
function fitted(key: string): string {
  const points = Array.from(key);
  return points.length <= VERSION_KEY_MAX ? key : points.slice(0, VERSION_KEY_MAX).join('');
}

export function versionKey(version: string): string {
  return fitted(unboundedKey(version));
}

function unboundedKey(version: string): string {
  let rest = version.trim().replace(/\+.*$/, '');
  if (/^v\d/i.test(rest)) rest = rest.slice(1);
  const release = /^\d+(?:\.\d+)*/.exec(rest)?.[0] ?? '';
  const numbers = release === '' ? [] : release.split('.');
  while (numbers.length > 0 && /^0+$/.test(numbers[numbers.length - 1]!)) numbers.pop();
  let key = numbers.map(numberKey).join('.') + END;

  const qualifier = rest.slice(release.length).replace(/^[.\-_]+/, '');
  const parts = tokens(qualifier);
  if (parts.length === 0) return key + RELEASE_RANK + END;
  const first = parts[0]!;
  const known = RANKS[first];
  if (known !== undefined) {
    key += known;
    parts.shift();
  } else {
    key += UNKNOWN_RANK;
  }
  key += parts.map((p) => (/^\d/.test(p) ? numberKey(p) : p)).join('.');
  return key + END;
}

/** Negative, zero or positive as `a` is lower than, equal to or higher than `b` in version order. */
export function compareVersions(a: string, b: string): number {
  // Code point by code point: the byte order of UTF-8 (and of COLLATE "C"), which `<` on UTF-16 is not.
  const x = [...versionKey(a)];
  const y = [...versionKey(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
