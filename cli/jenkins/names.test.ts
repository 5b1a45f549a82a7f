import { describe, expect, it } from 'vitest';
import { itemKey, itemPath, jobNameProblem, nameProblem, parentFolders, splitName } from './names.js';

describe('Jenkins names', () => {
  it('accepts ordinary names and folders', () => {
    expect(nameProblem('build-main_2.x (nightly)')).toBeUndefined();
    expect(jobNameProblem('team/app/build')).toBeUndefined();
  });

  it.each(['\\', ':', '?', '*', '|', '<', '>', '[', ']', '"', '%', ';', '@', '#', '$', '&', '!', '^', '/'])('refuses %s in a name', (c) => {
    expect(nameProblem(`a${c}b`)).toBe(`"${c}" is not allowed in a Jenkins name`);
  });

  it('refuses blank, dot names, surrounding spaces and long names', () => {
    expect(nameProblem('  ')).toBe('must not be blank');
    expect(nameProblem('.')).toBe('"." is not allowed');
    expect(nameProblem(' a')).toBe('must not start or end with spaces');
    expect(nameProblem('x'.repeat(255))).toBeUndefined();
    expect(nameProblem('x'.repeat(256))).toBe('longer than 255 characters');
    expect(jobNameProblem('a/../b')).toBe('segment "..": ".." is not allowed');
    // As deep as the item listing reads, so that a second apply finds the job again.
    expect(jobNameProblem('a/b/c/d/e/f/g/h/job')).toBeUndefined();
    expect(jobNameProblem('a/b/c/d/e/f/g/h/i/job')).toBe('at most 8 folders deep (this is 9)');
  });

  // Jenkins.checkGoodName: no ISO control character anywhere, and no trailing dot (SECURITY-2424).
  it.each(['a\tb', 'a\nb', 'a\u0000b', 'a\u007fb', 'a\u0085b'])('refuses the control character in %j', (name) => {
    expect(nameProblem(name)).toBe('control characters are not allowed');
    expect(jobNameProblem(`team/${name}`)).toBe(`segment "${name}": control characters are not allowed`);
  });

  it('refuses a trailing dot', () => {
    expect(nameProblem('app.')).toBe('must not end with "."');
    expect(jobNameProblem('team./app')).toBe('segment "team.": must not end with "."');
    expect(nameProblem('app.v2')).toBeUndefined();
  });

  it('splits folders and builds encoded URL paths', () => {
    expect(parentFolders('a/b/c')).toEqual(['a', 'a/b']);
    expect(parentFolders('c')).toEqual([]);
    expect(splitName('a/b/c')).toEqual({ parent: 'a/b', name: 'c' });
    expect(splitName('c')).toEqual({ parent: undefined, name: 'c' });
    expect(itemPath('my team/app (1)')).toBe('/job/my%20team/job/app%20(1)');
  });

  // String.CASE_INSENSITIVE_ORDER: each char upper-cased, then lower-cased, one char each.
  it('compares names as Jenkins does, char by char without regard to case', () => {
    expect(itemKey('Team/App')).toBe(itemKey('team/app'));
    expect(itemKey('ıdea')).toBe(itemKey('IDEA'));
    expect(itemKey('\u212Aey')).toBe(itemKey('key'));
    expect(itemKey('straße')).not.toBe(itemKey('STRASSE'));
    expect(itemKey('İx')).toBe(itemKey('ix'));
  });
});
