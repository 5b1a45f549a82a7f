// The router and the OpenAPI document are built from one list of endpoints (server/routes): this
// compares what the running app routes with what the document describes, both ways.
import type { Router } from '@koa/router';
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/log.js';
import { openApiDocument } from '../../server/openapi.js';
import { Writable } from 'node:stream';

/** What the router serves that is not part of the API it describes: the page and the document itself. */
const NOT_DOCUMENTED = ['GET /', 'GET /swagger.yaml', 'GET /v1/openapi.json'];

function routesOf(metrics: boolean): string[] {
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  // A client without a connection: building the app runs no query.
  const db = knexFactory({ client: 'pg' });
  const config = { ...loadConfig([], {}), metrics };
  const app = createApp({ db, config, log: createLogger('error', silent), secret: 'x'.repeat(32) });
  const router = app.middleware.map((m) => (m as { router?: Router }).router).find(Boolean)!;
  return router.stack.flatMap((layer) =>
    layer.methods.filter((m) => m !== 'HEAD').map((method) => `${method} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
  );
}

function documented(): string[] {
  const paths = (openApiDocument() as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.entries(paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
}

describe('endpoints', () => {
  it('every documented operation is routed, and every route is documented', () => {
    const routed = routesOf(true).filter((route) => !NOT_DOCUMENTED.includes(route));
    expect(routed.length).toBeGreaterThan(10);
    expect([...routed].sort()).toEqual([...documented()].sort());
  });

  it('routes /metrics only when metrics are on, as the document says', () => {
    expect(routesOf(true)).toContain('GET /metrics');
    expect(routesOf(false)).not.toContain('GET /metrics');
    expect(documented()).toContain('GET /metrics');
  });
});
