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

  // Secrets never reach the plan: the trigger token (docs/jobs.md: "The token itself is never
  // printed"), credential ids and the user info of a repository address show as masks, whose digests
  // still differ where the secret changed. A change near the top shows the document's first line.
  it('masks secrets in the diff, and a changed secret still shows', () => {
    const job = (token: string, id: string, url: string) =>
      `<flow-definition><authToken>${token}</authToken><definition class="C"><scm class="G"><url>${url}</url><credentialsId>${id}</credentialsId></scm></definition></flow-definition>`;
    const secrets = ['3f2504e0-4f89-41d3-9a0c-0305e82c3301', 'old-key', 'ghp_old', '9b2e6a1c-0d4f-4c8e-8a3b-5f7e2d1c6b90', 'new-key', 'ghp_new'];
    const comparison = compareConfig(
      'job x',
      job(secrets[0]!, secrets[1]!, `https://bot:${secrets[2]}@git.example.com/app.git`),
      job(secrets[3]!, secrets[4]!, `https://bot:${secrets[5]}@git.example.com/app.git`),
    );
    if (comparison.equal) throw new Error('expected a diff');
    for (const secret of [...secrets, 'bot:']) expect(comparison.diff).not.toContain(secret);
    const masks = comparison.diff.match(/\*{4}[0-9a-f]{6}/g) ?? [];
    expect(masks).toHaveLength(6);
    expect(new Set(masks).size).toBe(6);
    expect(comparison.diff.replace(/\*{4}[0-9a-f]{6}/g, '****')).toBe(
      [
        '--- jenkins: job x',
        '+++ file: job x',
        '@@ -1,10 +1,10 @@',
        ' <?xml version="1.0" encoding="UTF-8"?>',
        ' <flow-definition>',
        '-  <authToken>****</authToken>',
        '+  <authToken>****</authToken>',
        '   <definition class="C">',
        '     <scm class="G">',
        '-      <url>https://****@git.example.com/app.git</url>',
        '-      <credentialsId>****</credentialsId>',
        '+      <url>https://****@git.example.com/app.git</url>',
        '+      <credentialsId>****</credentialsId>',
        '     </scm>',
        '   </definition>',
        ' </flow-definition>',
      ].join('\n'),
    );
  });
});
