import { describe, expect, it } from 'vitest';
import { compareConfig } from './compare.js';

const config = (description: string) =>
  `<flow-definition><description>${description}</description><a>1</a><b>2</b><c>3</c><d>4</d><e>5</e></flow-definition>`;

describe('compareConfig', () => {
  it('is equal for configs Jenkins treats alike', () => {
    expect(compareConfig('job x', `<?xml version='1.1' encoding='UTF-8'?>\n${config('same')}`, config('same'))).toEqual({ equal: true });
  });

  // The whole diff, exactly: headers naming the item, three lines of context (the library's
  // default is four), no "=====" separator of the library, a description line of "=====" kept,
  // nothing after the last line.
  it('gives the unified diff of both normalised configs, live first', () => {
    const comparison = compareConfig('job x', config('top\n=====\nend'), config('top\n=====\nEND'));
    expect(comparison).toEqual({
      equal: false,
      diff: [
        '--- jenkins: job x',
        '+++ file: job x',
        '@@ -2,7 +2,7 @@',
        ' <flow-definition>',
        '   <description>top',
        ' =====',
        '-end</description>',
        '+END</description>',
        '   <a>1</a>',
        '   <b>2</b>',
        '   <c>3</c>',
      ].join('\n'),
    });
  });
});
