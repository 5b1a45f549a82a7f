// The 503 a server answers while it is still starting is an answer like any other: X-Request-Id,
// the security headers, a line in the log, and its count in /metrics.
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { sleep } from '../helpers/instances.js';
import { sample } from '../helpers/metrics.js';
import { BIN, cleanEnv, freePort, tempDir } from '../helpers/process.js';
import { UNMATCHED_ROUTE } from '../../server/http/observe.js';

it('carries X-Request-Id and the security headers, is logged, and is counted', { timeout: 240_000 }, async () => {
  // A slow first password hash keeps the server starting for a few seconds.
  const port = await freePort();
  const env = cleanEnv({ REPO_MAN_DATA_DIR: tempDir(), REPO_MAN_BCRYPT_COST: '15', REPO_MAN_ADMIN_PASSWORD: 'starting-admin-pw' });
  const child = spawn(process.execPath, [BIN, 'server', '--port', String(port)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  // The server says on stderr when it is ready.
  const ready = new Promise<void>((resolve) => {
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('repoadmin server listening on')) resolve();
    });
  });
  try {
    let answer: Response | undefined;
    for (let i = 0; i < 300 && !answer; i++) {
      answer = await fetch(`http://127.0.0.1:${port}/v1/users`, { headers: { 'X-Request-Id': 'while-starting-1' } }).catch(() => undefined);
      if (!answer) await sleep(20);
    }
    expect(answer?.status).toBe(503);
    expect(answer!.headers.get('x-request-id')).toBe('while-starting-1');
    expect(answer!.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer!.headers.get('referrer-policy')).toBe('no-referrer');
    for (let i = 0; i < 50 && !stdout.includes('while-starting-1'); i++) await sleep(100);
    const line = stdout.split('\n').find((l) => l.includes('while-starting-1'));
    expect(JSON.parse(line!)).toMatchObject({ requestId: 'while-starting-1', status: 503, path: '/v1/users', method: 'GET' });

    // Counted as the answers of the app are, under the route of requests no route served. (The
    // slow hash that keeps the server starting takes over a minute on a busy machine: hence the timeout.)
    await ready;
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(sample(metrics, 'http_requests_total', { method: 'GET', route: UNMATCHED_ROUTE, status: '503' })).toBe(1);
    expect(sample(metrics, 'http_request_duration_seconds_count', { method: 'GET', route: UNMATCHED_ROUTE, status: '503' })).toBe(1);
  } finally {
    child.kill('SIGKILL');
  }
});
