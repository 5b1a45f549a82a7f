import { describe, expect, it } from 'vitest';
import { cronProblem } from './cron.js';

describe('cronProblem', () => {
  it.each([
    'H 2 * * *',
    'H(0-29) * * * *',
    'H/15 * * * *',
    'H(0-29)/10 * * * *',
    '*/5 * * * 1-5',
    '0 8-18/2 * * 1,3,5',
    '15,45 H(8-17) 1-15 1-12 0-7',
    '@hourly',
    '@daily',
    '@midnight',
    '@weekly',
    '@monthly',
    '@yearly',
    '@annually',
    'TZ=Europe/Berlin\n# nightly\nH 2 * * *\nH 14 * * 6',
    'TZ=UTC\r\nH 2 * * *',
    'TZ=US/Eastern\nH 2 * * *',
    'H(0-9)/10 * * * *',
    '* * H/28 * *',
    '* * * * H/7',
  ])('accepts %j', (spec) => expect(cronProblem(spec)).toBeUndefined());

  it.each([
    ['', 'empty cron spec'],
    ['H 2 * *', 'expected 5 fields (minute hour day month weekday), got 4'],
    ['* * * * * *', 'expected 5 fields (minute hour day month weekday), got 6'],
    ['60 * * * *', 'minute: 60 is outside 0-59'],
    ['* 24 * * *', 'hour: 24 is outside 0-23'],
    ['* * 0 * *', 'day of month: 0 is outside 1-31'],
    ['* * * 13 *', 'month: 13 is outside 1-12'],
    ['* * * * 8', 'day of week: 8 is outside 0-7'],
    ['H(40-20) * * * *', 'minute: range 40-20 runs backwards'],
    ['H(0-60) * * * *', 'minute: 60 is outside 0-59'],
    ['*/0 * * * *', 'minute: step must be at least 1'],
    ['5/10 * * * *', 'minute: "5/10": a step needs a range, * or H'],
    ['*/61 * * * *', 'minute: step 61 is larger than the field'],
    ['MON * * * *', 'minute: cannot read "MON"'],
    ['1,,2 * * * *', 'minute: cannot read ""'],
    ['@often', 'unknown alias @often'],
    ['H 2 * * *\nnope', 'expected 5 fields (minute hour day month weekday), got 1 (in "nope")'],
    // BaseParser.doHash: a hashed step is bounded by its own range, and plain H spreads the day of
    // month over 1-28 and the day of week over 0-6.
    ['H(0-9)/15 * * * *', 'minute: step 15 is larger than the range 0-9'],
    ['H(10-19)/11 * * * *', 'minute: step 11 is larger than the range 10-19'],
    ['* * H/29 * *', 'day of month: step 29 is larger than the range 1-28'],
    ['* * * * H/8', 'day of week: step 8 is larger than the range 0-6'],
    // CronTabList.create: TZ= only on the very first line, and only a known time zone.
    ['# nightly\nTZ=Europe/Berlin\nH 2 * * *', 'expected 5 fields (minute hour day month weekday), got 1 (in "TZ=Europe/Berlin")'],
    ['TZ=Nowhere/City\nH 2 * * *', 'unknown time zone "Nowhere/City"'],
    // Java compares zone ids exactly (CronTabList.getValidTimezone); Intl would take any case.
    ['TZ=europe/berlin\nH 2 * * *', 'unknown time zone "europe/berlin": Jenkins wants "Europe/Berlin"'],
    ['TZ=utc\nH 2 * * *', 'unknown time zone "utc": Jenkins wants "UTC"'],
    // crontab.g reads ASCII only: a no-break space looks like a space and fails the spec.
    ['H\u00a02 * * *', "contains U+00A0 (a no-break space), which Jenkins' cron parser refuses (it then drops the trigger): use plain spaces and ASCII only"],
    ['H 2 * * *\u00a0', "contains U+00A0 (a no-break space), which Jenkins' cron parser refuses (it then drops the trigger): use plain spaces and ASCII only"],
    ['H 2 * * *\nH\u20034 * * *', "contains U+2003 (a space other than ASCII), which Jenkins' cron parser refuses (it then drops the trigger): use plain spaces and ASCII only"],
    ['H 2 * * \uff15', "contains U+FF15 (not ASCII), which Jenkins' cron parser refuses (it then drops the trigger): use plain spaces and ASCII only"],
  ])('refuses %j: %s', (spec, problem) => expect(cronProblem(spec)).toBe(problem));

  it('takes a comment with any characters, and an empty spec only where one is allowed (SCM polling)', () => {
    expect(cronProblem('# nightly\u00a0build\nH 2 * * *')).toBeUndefined();
    expect(cronProblem('', { empty: true })).toBeUndefined();
    expect(cronProblem('', { empty: false })).toBe('empty cron spec');
  });
});
