// The application: the pipeline answers every declared endpoint (server/http/pipeline.ts); Koa
// serves the rest, the package page and `/`. It never listens: start.ts and the tests do.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router } from '@koa/router';
import Koa from 'koa';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { createPasswords, type Passwords } from './auth/passwords.js';
import { tokenSettings } from './auth/tokens.js';
import type { ServerConfig } from './config.js';
import { trackOutages } from './db/outage.js';
import type { ReadRouting } from './db/replica.js';
import { createPipeline } from './http/pipeline.js';
import type { Metrics } from './metrics.js';
import { errors } from './middleware/errors.js';
import { observe } from './middleware/observe.js';
import { publicFiles } from './middleware/static.js';
import { PUBLIC_DIR } from './paths.js';
import { ENDPOINTS } from './routes/index.js';
import { auditWriter } from './services/audit.js';
import type { Services } from './services/context.js';

export interface AppOptions {
  db: Knex;
  config: ServerConfig;
  log: Logger;
  /** The JWT signing secret (from the configuration or the database). */
  secret: string;
  passwords?: Passwords;
  /** The Prometheus metrics, unless REPO_MAN_METRICS=false; made before the server listens (start.ts). */
  metrics?: Metrics;
  now?: () => Date;
  publicDir?: string;
  /** The read replica (server/db/replica.ts), when one is configured. */
  reads?: ReadRouting;
  /** The process's webhook outbox, which numbers new events (start.ts starts it). */
  outbox?: { wake(): void };
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** What the endpoints and the scheduled work run with. */
export function createServices(options: AppOptions): Services {
  const services: Services = {
    db: options.db,
    config: options.config,
    log: options.log,
    passwords: options.passwords ?? createPasswords(options.config.bcryptCost),
    tokens: tokenSettings(options.secret, options.config.jwt.issuer, options.config.jwt.ttlSeconds),
    now: options.now ?? (() => new Date()),
    metrics: options.metrics,
    reads: options.reads,
    outbox: options.outbox,
  };
  services.audit = auditWriter(services);
  return services;
}

export function createApp(options: AppOptions, services: Services = createServices(options)): RequestListener {
  const metrics = services.metrics;
  const outages = trackOutages(options.db, options.log);
  const pipeline = createPipeline(ENDPOINTS, services, outages);

  const koa = new Koa();
  koa.silent = true;
  koa.use(observe(options.log, metrics));
  koa.use(errors(options.log, outages));
  koa.use(publicFiles(options.publicDir ?? PUBLIC_DIR));
  const router = new Router();
  router.get('/', (ctx) => ctx.redirect('/public/index.html'));
  koa.use(router.routes());
  const rest = koa.callback();
  return (req, res) => {
    if (!pipeline(req, res)) void rest(req, res);
  };
}
