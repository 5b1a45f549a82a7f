// A database that goes away: 503 `unavailable`, never 500, and the log says why.
import { describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('database gone on %s', (kind) => {
  it('answers 503 unavailable on readiness and on every database route', async () => {
    const server = await startTestServer({ kind });
    const token = await server.adminToken();
    if (kind === 'pglite') await server.db.destroy();
    else await server.database.drop();
    const ready = await server.request('GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body._message.code).toBe('unavailable');
    // Every 503 says when to try again (docs/api.md, "Faults").
    expect(ready.headers.get('retry-after')).toBe('1');
    for (const [method, path] of [['POST', '/v1/repositories/search'], ['GET', '/v1/users/me'], ['POST', '/v1/authentication/generate-token']] as const) {
      const res = await server.request(method, path, { token, body: method === 'POST' ? { username: 'a', password: 'b' } : undefined });
      expect(res.status, path).toBe(503);
      expect(res.headers.get('retry-after'), path).toBe('1');
      expect(res.body._message).toEqual({ category: 'ERROR', code: 'unavailable', message: 'the database is unavailable: try again shortly' });
    }
    expect((await server.request('GET', '/health')).status).toBe(200);
    expect(server.logs.some((l) => l.includes('"level":50'))).toBe(true);
    await server.close();
  });
});
