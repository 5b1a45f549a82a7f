// The globs of trusted publishers' claims and branches (docs/api.md, "Trusted publishing"): `*`
// stands for any characters, none included; `\*` is an asterisk; everything else is itself.

/** Whether `value` matches `pattern` whole. */
export function globMatches(pattern: string, value: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && pattern[i + 1] === '*') {
      source += '\\*';
      i++;
    } else if (c === '*') source += '[\\s\\S]*';
    else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'u').test(value);
}
