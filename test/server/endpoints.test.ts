// One declaration per endpoint (server/routes): every operation the document describes is served,
// the server serves nothing under /v1 it does not describe, and each path is written in one place.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../server/openapi.js';
import { API_ENDPOINTS } from '../../server/routes/index.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const ROOT = join(import.meta.dirname, '../..');
const ANY_UUID = '00000000-0000-4000-8000-000000000000';

function documented(): string[] {
  const paths = (openApiDocument(API_ENDPOINTS) as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.entries(paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('endpoints', () => {
  let server: TestServer;
  let quiet: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    quiet = await startTestServer({ config: { metrics: false } });
  });
  afterAll(async () => {
    await Promise.all([server?.close(), quiet?.close()]);
  });

  it('serves every documented operation (never a 404 for the route or a 405)', async () => {
    const operations = documented();
    expect(operations.length).toBeGreaterThan(10);
    for (const operation of operations) {
      const [method, template] = operation.split(' ') as [string, string];
      const res = await server.request(method, template.replace(/\{\w+\}/g, ANY_UUID));
      expect(res.status, operation).not.toBe(405);
      if (res.status === 404) expect(res.body._message.message, operation).not.toMatch(/^no such resource/);
    }
  });

  it('answers a path it does not declare with 404, and a declared path with another method with 405', async () => {
    expect((await server.request('GET', '/v1/nothing')).status).toBe(404);
    const wrong = await server.request('PATCH', '/v1/repositories/search');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });

  it('serves /metrics only when metrics are on, as the document says', async () => {
    expect(documented()).toContain('GET /metrics');
    expect((await server.request('GET', '/metrics')).status).toBe(200);
    expect((await quiet.request('GET', '/metrics')).status).toBe(404);
  });

  it('writes each /v1 path in exactly one server file: its declaration under server/routes', () => {
    const files = new Map<string, Set<string>>();
    for (const file of sources(join(ROOT, 'server'))) {
      for (const [, path] of readFileSync(file, 'utf8').matchAll(/['"`](\/v1\/[^'"`\s]+)['"`]/g)) {
        files.set(path!, (files.get(path!) ?? new Set()).add(relative(ROOT, file)));
      }
    }
    expect(files.size).toBeGreaterThan(10);
    for (const [path, where] of files) {
      expect([...where], path).toHaveLength(1);
      expect([...where][0], path).toMatch(/^server\/routes\//);
    }
  });
});
