// Output into a pipe whose reader stops early ends quietly, as `head` expects.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv } from '../helpers/process.js';

const exec = promisify(execFile);

describe('a closed pipe', () => {
  it.each([['--help'], ['jobs', '--help'], ['user', '--help']])('repoadmin %s | true ends quietly when the reader is gone', async (...args) => {
    const { stdout, stderr } = await exec('bash', ['-o', 'pipefail', '-c', `node ${BIN} ${args.join(' ')} | true; echo "status \${PIPESTATUS[0]}"`], { env: cleanEnv() });
    expect(stderr).toBe('');
    expect(stdout.trim()).toBe('status 0');
  });
});
