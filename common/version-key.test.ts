import { describe, expect, it } from 'vitest';
import { VERSION_KEY_MAX, versionKey } from './version-key.js';

// The fixture of docs/api.md, "Version order", ascending; entries in one inner list are equal.
const FIXTURE = [
  ['1.0.0-alpha'], ['1.0.0-alpha.1'], ['1.0.0-beta'], ['1.0.0-beta.2'], ['1.0.0-beta.11'], ['1.0.0-M1'],
  ['1.0.0-rc.1'], ['1.0.0-RC2'], ['1.0.0-SNAPSHOT'], ['1.0.0', 'v1.0.0', '1.0'], ['1.0.1'], ['1.1'],
  ['1.2.0-SNAPSHOT'], ['1.2.0'], ['1.9.0'], ['1.10.0'], ['1.10.0.1'], ['2.0.0'], ['2019.03'],
];

const byteOrder = (a: string, b: string) => (Buffer.compare(Buffer.from(a), Buffer.from(b)));

describe('versionKey', () => {
  it('orders the docs/api.md fixture exactly', () => {
    for (let i = 0; i < FIXTURE.length - 1; i++) {
      for (const lower of FIXTURE[i]!) {
        for (const higher of FIXTURE[i + 1]!) {
          expect(byteOrder(versionKey(lower), versionKey(higher)), `${lower} < ${higher}`).toBe(-1);
        }
      }
    }
  });

  it('gives equal versions equal keys', () => {
    for (const group of FIXTURE) {
      for (const v of group) expect(versionKey(v)).toBe(versionKey(group[0]!));
    }
    expect(versionKey('1.0.0+build.7')).toBe(versionKey('1.0.0'));
  });

  it('ranks unknown qualifiers after rc and before snapshot, by text', () => {
    const sorted = ['1.0-SNAPSHOT', '1.0-zeta', '1.0-rc1', '1.0-delta'].sort((a, b) => byteOrder(versionKey(a), versionKey(b)));
    expect(sorted).toEqual(['1.0-rc1', '1.0-delta', '1.0-zeta', '1.0-SNAPSHOT']);
  });

  it('compares qualifier numbers numerically and treats Final as a release', () => {
    expect(byteOrder(versionKey('2.0-M9'), versionKey('2.0-M10'))).toBe(-1);
    expect(versionKey('5.4.2.Final')).toBe(versionKey('5.4.2'));
  });
});

describe('versionKey length', () => {
  it('fits the column for any 100-character version, keeping the order of shorter keys', () => {
    const long = `1${'İ1'.repeat(49)}İ`;
    expect(Array.from(versionKey(long)).length).toBeLessThanOrEqual(VERSION_KEY_MAX);
    expect(byteOrder(versionKey('1.0.0-alpha'), versionKey(long))).toBe(-1);
    expect(byteOrder(versionKey(long), versionKey('1.0.0'))).toBe(-1);
    const dense = `1${'-1a'.repeat(33)}`;
    expect(Array.from(versionKey(dense)).length).toBeLessThanOrEqual(VERSION_KEY_MAX);
  });
});

describe('versionKey, as stored', () => {
  // The keys are stored in version_key: a key that changes for the same version would sort the
  // versions published before the change apart from those after it. A new format needs a migration
  // that rewrites the column, and new keys here.
  it('keeps the key of each kind of version', () => {
    const keys: [string, string][] = [
      ['1.0.0', '011!9!'],
      ['v2.1+build.5', '012.011!9!'],
      // Build metadata runs to the end of the text: a line break ends none.
      ['1.0+a\nb', '011!5+.a.\n.b!'],
      [' 1.0 ', '011!9!'],
      ['1.001', '011.011!9!'],
      ['1.05', '011.015!9!'],
      ['1.00', '011!9!'],
      ['1.999999999', '011.09999999999!9!'],
      ['1.1000000000', '011.101000000000!9!'],
      ['1.0-alpha-beta', '011!1beta!'],
      ['1.0alpha-beta', '011!1beta!'],
      ['1.0-a1', '011!1011!'],
      ['1.0-alpha1', '011!1011!'],
      ['1.0-b2', '011!2012!'],
      ['1.0-beta2', '011!2012!'],
      ['1.0-m3', '011!3013!'],
      ['1.0-milestone3', '011!3013!'],
      ['1.0-cr4', '011!4014!'],
      ['1.0-rc4', '011!4014!'],
      ['1.0-rc.1.2', '011!4011.012!'],
      ['1.0-SNAPSHOT', '011!6!'],
      ['1.0-ga', '011!9!'],
      ['1.0-release', '011!9!'],
      ['1.0-Final', '011!9!'],
      ['1.0-v2', '011!5v.012!'],
      ['1.0-x@@1', '011!5x.@@.011!'],
      ['SNAPSHOT', '!6!'],
      ['x1', '!5x.011!'],
    ];
    expect(keys.map(([version]) => [version, versionKey(version)])).toEqual(keys);
  });

  it('orders a number of ten digits after one of nine, and drops leading zeros', () => {
    expect(byteOrder(versionKey('1.999999999'), versionKey('1.1000000000'))).toBe(-1);
    expect(versionKey('1.001')).toBe(versionKey('1.1'));
    expect(byteOrder(versionKey('1'), versionKey('1.05'))).toBe(-1);
    // Numbers are cut to 99 digits, so that their length fits its two digits.
    expect(byteOrder(versionKey(`1.1${'0'.repeat(98)}`), versionKey(`1.${'9'.repeat(120)}`))).toBe(-1);
  });
});
