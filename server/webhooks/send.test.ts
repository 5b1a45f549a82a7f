import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addressRules } from './addresses.js';
import { retryAfterMs, send } from './send.js';

describe('a delivery attempt', () => {
  it('gives up on a receiver that does not answer within its time', async () => {
    const server = http.createServer(() => {
      // Never answers.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const attempt = await send({ url, id: 'a', body: '{}', secrets: [] }, addressRules(['127.0.0.0/8']), 300);
      expect(attempt.error).toBe('no answer within 0.3 s');
      expect(attempt.status).toBeUndefined();
      expect(attempt.durationMs).toBeGreaterThanOrEqual(290);
      expect(attempt.durationMs).toBeLessThan(5_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Mon, 01 Jun 2026 12:01:30 GMT', now)).toBe(90_000);
    expect(retryAfterMs('Mon, 01 Jun 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});
