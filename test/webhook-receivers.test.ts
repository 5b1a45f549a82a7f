// The receivers' signature checks of docs/webhooks.md, "Checking the signature", run as written
// against the server's signing: each secret of a rotation verifies, a wrong secret or a changed body
// does not. The Python one runs when python3 is on the PATH.
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newSecret, signatureHeader } from '../server/webhooks/signature.js';
import { skipping } from './helpers/skip.js';

const DOC = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8');
const section = DOC.slice(DOC.indexOf('### Checking the signature'));
const block = (language: string) => {
  const found = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(section);
  if (!found) throw new Error(`no ${language} block under "Checking the signature"`);
  return found[1]!;
};

const [current, previous, wrong] = [newSecret(), newSecret(), newSecret()];
const id = 'msg_2a9d1f0c';
const timestamp = Math.floor(Date.now() / 1000);
const body = '{"type":"latest.moved","timestamp":"2026-06-01T12:00:00.000Z","data":{"to":"1.2.3","note":"é"}}';
const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader([current, previous], id, timestamp, body) };
const cases: [string, string, boolean][] = [
  [current, body, true],
  [previous, body, true],
  [wrong, body, false],
  [current, body.replace('1.2.3', '1.2.4'), false],
];

const python = spawnSync('python3', ['--version']).status === 0 ? undefined : 'python3 is not on the PATH';

describe('the receivers of docs/webhooks.md', () => {
  it('Node: verifies each secret of a rotation, refuses another secret and a changed body', () => {
    const code = block('js').replace(/^import \{ createHmac, timingSafeEqual \} from 'node:crypto';$/m, 'const { createHmac, timingSafeEqual } = crypto;');
    const verify = new Function('crypto', `${code}\nreturn verify;`)(crypto) as (secret: string, h: Record<string, string>, raw: string) => boolean;
    for (const [secret, raw, expected] of cases) expect(verify(secret, headers, raw)).toBe(expected);
  });

  it.skipIf(skipping('the Python receiver', python))('Python: the same', () => {
    const script = `${block('python')}
import json, sys
cases = json.load(sys.stdin)
print(json.dumps([verify(c["secret"], c["headers"], c["body"].encode()) for c in cases]))
`;
    const input = JSON.stringify(cases.map(([secret, raw]) => ({ secret, headers, body: raw })));
    const out = execFileSync('python3', ['-c', script], { input, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual(cases.map(([, , expected]) => expected));
  });
});
