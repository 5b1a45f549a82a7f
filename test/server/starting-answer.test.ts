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
  // Each thing the test waits for is an event of the child's (bounded by the test's time limit);
  // the child's exit ends every wait at once.
  const exited = new Promise<never>((_, reject) => child.once('exit', (code, signal) => reject(new Error(`the server exited (${code ?? signal}) while the test waited`))));
  exited.catch(() => undefined);
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  /** The log line of the request with this id, once the log has gone past it (whole lines only). */
  const loggedLine = (id: string) => stdout.split('\n').slice(0, -1).find((l) => l.includes(id));
  const logged = (id: string) =>
    new Promise<void>((resolve) => {
      const look = () => (loggedLine(id) === undefined ? undefined : (child.stdout!.off('data', look), resolve()));
      child.stdout!.on('data', look);
      look();
    });
  // The server says on stderr when it is ready.
  const ready = new Promise<void>((resolve) => {
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('repoadmin server listening on')) resolve();
    });
  });
  try {
    // Until the port is open (the server answers from its first moments, while it starts).
    let answer: Response | undefined;
    while (!answer) {
      answer = await fetch(`http://127.0.0.1:${port}/v1/users`, { headers: { 'X-Request-Id': 'while-starting-1' } }).catch(() => undefined);
      if (!answer) await Promise.race([sleep(20), exited]);
    }
    expect(answer?.status).toBe(503);
    expect(answer!.headers.get('x-request-id')).toBe('while-starting-1');
    expect(answer!.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer!.headers.get('referrer-policy')).toBe('no-referrer');
    // The log is one stream in order: once a later request's line is there, the 503's must be too.
    await Promise.race([ready, exited]);
    const later = await fetch(`http://127.0.0.1:${port}/v1/users`, { headers: { 'X-Request-Id': 'after-ready-1' } });
    expect(later.status).toBe(401);
    await Promise.race([logged('after-ready-1'), exited]);
    expect(JSON.parse(loggedLine('while-starting-1') ?? 'null')).toMatchObject({ requestId: 'while-starting-1', status: 503, path: '/v1/users', method: 'GET' });

    // Counted as the answers of the app are, under the route of requests no route served. (The
    // slow hash that keeps the server starting takes over a minute on a busy machine: hence the timeout.)
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(sample(metrics, 'http_requests_total', { method: 'GET', route: UNMATCHED_ROUTE, status: '503' })).toBe(1);
    expect(sample(metrics, 'http_request_duration_seconds_count', { method: 'GET', route: UNMATCHED_ROUTE, status: '503' })).toBe(1);
  } finally {
    child.kill('SIGKILL');
  }
});
