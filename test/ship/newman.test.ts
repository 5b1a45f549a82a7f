// The shipped Postman collection runs green with newman against a fresh live server.
import { readFileSync } from 'node:fs';
import newman, { type NewmanRunSummary } from 'newman';
import { describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { COLLECTION_FILE, uncovered } from './api-files.js';

interface Item {
  name: string;
  item?: Item[];
  request?: { method: string; url: { raw: string } };
}

const collection = JSON.parse(readFileSync(COLLECTION_FILE, 'utf8')) as { info: { schema: string }; item: Item[] };
const requests = collection.item.flatMap((folder) => folder.item ?? [folder]).filter((item) => item.request);

function run(baseUrl: string): Promise<NewmanRunSummary> {
  return new Promise((resolve, reject) => {
    newman.run({ collection: COLLECTION_FILE, envVar: [{ key: 'baseUrl', value: baseUrl }], reporters: [] }, (error, summary) =>
      error ? reject(error) : resolve(summary),
    );
  });
}

describe('the Postman collection', () => {
  it('is a v2.1 collection with a request for every operation of the OpenAPI description', () => {
    expect(collection.info.schema).toBe('https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
    const paths = requests.map((item) => ({ method: item.request!.method, path: item.request!.url.raw.replace('{{baseUrl}}', '').split('?')[0]! }));
    expect(uncovered(paths)).toEqual([]);
    for (const extra of ['/swagger.yaml', '/v1/openapi.json', '/public/index.html']) expect(paths.map((p) => p.path)).toContain(extra);
  });

  it('starts with the first-day flow: admin token, admin password change, user, user token, publish, search, latest', () => {
    const names = requests.map((item) => item.name);
    const order = ['Admin token', 'Change the admin password', 'Create a pipeline user', 'User token', 'Publish a version', 'Search', 'Latest'];
    const positions = order.map((prefix) => names.findIndex((name) => name.startsWith(prefix)));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  for (const kind of dbKinds()) {
    it(`runs green with newman against a fresh server (${kind})`, async () => {
      const server = await startTestServer({ kind, mustChangeAdminPassword: true });
      try {
        const summary = await run(server.url);
        const failures = summary.run.failures.map((f) => `${f.source?.name ?? '?'}: ${f.error.message}`);
        expect(failures).toEqual([]);
        expect(summary.run.stats.requests.total).toBe(requests.length);
        expect(summary.run.stats.requests.failed).toBe(0);
        // Every request checks at least its status and X-Request-Id, and most the shape of the answer.
        expect(summary.run.stats.assertions.total).toBeGreaterThanOrEqual(3 * requests.length);
        expect(summary.run.stats.assertions.failed).toBe(0);
      } finally {
        await server.close();
      }
    }, 60_000);
  }
});
