// The Koa application. It never listens: main.ts and the tests do.
import { Router } from '@koa/router';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { createPasswords, type Passwords } from './auth/passwords.js';
import { tokenSettings } from './auth/tokens.js';
import type { ServerConfig } from './config.js';
import { trackOutages } from './db/outage.js';
import { createMetrics } from './metrics.js';
import { accessLog } from './middleware/access-log.js';
import { errors } from './middleware/errors.js';
import { httpMetrics } from './middleware/metrics.js';
import { requestId } from './middleware/request-id.js';
import { publicFiles } from './middleware/static.js';
import { openApiDocument, openApiYaml } from './openapi.js';
import { PUBLIC_DIR } from './paths.js';
import { ENDPOINTS } from './routes/index.js';
import type { Services } from './services/context.js';
// Last: the order in which modules load is the order of the schemas in the OpenAPI document.
import { fastReads } from './fast-reads.js';
import { fastPublish } from './fast-publish.js';

export interface AppOptions {
  db: Knex;
  config: ServerConfig;
  log: Logger;
  /** The JWT signing secret (from the configuration or the database). */
  secret: string;
  passwords?: Passwords;
  now?: () => Date;
  publicDir?: string;
  /** False: every request goes through Koa, none is answered before it (the tests compare the two). */
  fastPaths?: boolean;
}

export function createApp(options: AppOptions): Koa {
  const metrics = options.config.metrics ? createMetrics(options.db) : undefined;
  const services: Services = {
    db: options.db,
    config: options.config,
    log: options.log,
    passwords: options.passwords ?? createPasswords(options.config.bcryptCost),
    tokens: tokenSettings(options.secret, options.config.jwt.issuer, options.config.jwt.ttlSeconds),
    now: options.now ?? (() => new Date()),
    metrics,
  };

  const router = new Router();
  router.get('/', (ctx) => ctx.redirect('/public/index.html'));
  router.get('/swagger.yaml', (ctx) => {
    ctx.type = 'application/yaml';
    ctx.body = openApiYaml();
  });
  router.get('/v1/openapi.json', (ctx) => {
    ctx.body = openApiDocument();
  });
  // The handlers and their schemas are made here, once, not per request.
  for (const endpoint of ENDPOINTS) {
    if (endpoint.enabled && !endpoint.enabled(services)) continue;
    router[endpoint.method](endpoint.path, ...endpoint.handlers(services));
  }

  const app = new Koa({ proxy: options.config.trustProxy });
  app.silent = true;
  app.use(requestId());
  if (metrics) app.use(httpMetrics(metrics));
  app.use(accessLog(options.log));
  const outages = trackOutages(options.db, options.log);
  app.use(errors(options.log, outages));
  app.use(publicFiles(options.publicDir ?? PUBLIC_DIR));
  app.use(router.routes());
  app.use(router.allowedMethods());
  // The latest lookup, the search and publishing, when ordinary, are answered before Koa
  // (server/fast-reads.ts, server/fast-publish.ts).
  if (options.fastPaths === false) return app;
  const reads = fastReads(services, metrics, outages);
  const koaCallback = app.callback.bind(app);
  app.callback = () => {
    const handle = koaCallback();
    const publish = fastPublish(services, metrics, outages, handle);
    return (req, res) => {
      const request = req as IncomingMessage;
      const response = res as ServerResponse;
      return reads(request, response) || publish(request, response) ? Promise.resolve() : handle(req, res);
    };
  };
  return app;
}
