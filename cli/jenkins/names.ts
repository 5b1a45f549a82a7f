// Jenkins item and view names: the rules of jenkins.model.Jenkins.checkGoodName, plus folders.

/** Characters Jenkins refuses in an item or view name. */
const UNSAFE = /[\\/:?*|<>[\]"%;@#$&!^]/;
/** Java's Character.isISOControl, which Jenkins refuses anywhere in a name. */
// eslint-disable-next-line no-control-regex -- matches the control characters Jenkins refuses, on purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
export const MAX_NAME_LENGTH = 255;
/** The deepest a job may sit: the item listing reads this many levels (client.ts), so deeper jobs could not be found again. */
export const MAX_NAME_SEGMENTS = 9;

/** The problem with one name segment (no folders), or undefined. */
export function nameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'must not be blank';
  if (name !== name.trim()) return 'must not start or end with spaces';
  if (name === '.' || name === '..') return `"${name}" is not allowed`;
  if (name.length > MAX_NAME_LENGTH) return `longer than ${MAX_NAME_LENGTH} characters`;
  if (CONTROL.test(name)) return 'control characters are not allowed';
  const bad = UNSAFE.exec(name);
  if (bad) return `"${bad[0]}" is not allowed in a Jenkins name`;
  // Refused since SECURITY-2424: Windows drops a trailing dot, so `a.` and `a` would collide.
  if (name.endsWith('.')) return 'must not end with "."';
  return undefined;
}

/** The problem with a job name that may hold folders as `a/b/c`, or undefined. */
export function jobNameProblem(fullName: string): string | undefined {
  const segments = fullName.split('/');
  if (segments.length > MAX_NAME_SEGMENTS) return `at most ${MAX_NAME_SEGMENTS - 1} folders deep (this is ${segments.length - 1})`;
  for (const segment of segments) {
    const problem = nameProblem(segment);
    if (problem) return fullName.includes('/') ? `segment "${segment}": ${problem}` : problem;
  }
  return undefined;
}

/** `a/b/c` -> [`a`, `a/b`]: the folders a job lives in, outermost first. */
export function parentFolders(fullName: string): string[] {
  const segments = fullName.split('/');
  return segments.slice(0, -1).map((_, index) => segments.slice(0, index + 1).join('/'));
}

/** The URL path of an item: `a/b` -> `/job/a/job/b`, each segment encoded. */
export function itemPath(fullName: string): string {
  return fullName
    .split('/')
    .map((segment) => `/job/${encodeURIComponent(segment)}`)
    .join('');
}

/** The folder part and the last segment of a full name. */
export function splitName(fullName: string): { parent: string | undefined; name: string } {
  const at = fullName.lastIndexOf('/');
  return at < 0 ? { parent: undefined, name: fullName } : { parent: fullName.slice(0, at), name: fullName.slice(at + 1) };
}

/**
 * An item name as Jenkins compares it: its item maps and ListView's job names use
 * String.CASE_INSENSITIVE_ORDER / compareToIgnoreCase, which fold each UTF-16 char to upper and
 * then lower case, one char each (Character.toUpperCase): `App` is `app` and `ıdea` is `idea`,
 * but `straße` is not `STRASSE`, as a whole-string upper-casing would make it.
 */
export function itemKey(name: string): string {
  let key = '';
  for (let i = 0; i < name.length; i++) key += foldChar(name.charAt(i));
  return key;
}

/**
 * One char folded as compareToIgnoreCase does, with Java's one-char case mappings: where
 * JavaScript's full upper case gives several chars (`ß` is `SS`), Java keeps the char. U+0130 (İ)
 * is the one char whose full lower case (i and U+0307) is longer than its simple one, `i`.
 */
export function foldChar(char: string): string {
  const upper = char.toUpperCase();
  const simpleUpper = upper.length === 1 ? upper : char;
  return simpleUpper === '\u0130' ? 'i' : simpleUpper.toLowerCase();
}
