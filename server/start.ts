// Starting a server: config -> listen (503 until ready) -> database -> migrate -> app. The one way
// to start one, used by `repoadmin server` (main.ts) and the tests' servers.
import http from 'node:http';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { AppError } from '../common/errors.js';
import { createApp, createServices } from './app.js';
import { createPasswords } from './auth/passwords.js';
import type { ServerConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { type ReadRouting, startReadRouting } from './db/replica.js';
import { createHttpServer } from './http-server.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS, errorBody } from './http/errors.js';
import { type Outbox, startOutbox } from './services/outbox.js';
import { UNMATCHED_ROUTE, countRequest, logRequest, requestIdFrom } from './http/observe.js';
import { SECURITY_HEADERS } from './http/pipeline.js';
import { type Metrics, createMetrics } from './metrics.js';
import { createScheduler, type Scheduler, type SchedulerOptions } from './schedule.js';
import { registerTasks } from './tasks.js';
import { prepareDatabase } from './setup.js';

export interface StartOptions {
  log: Logger;
  /** The address to listen on; all of the machine's when absent. */
  host?: string;
  /** The server's clock (tests: token expiry, last use, login windows). */
  now?: () => Date;
  /** What the operator should know as soon as it is known (a data folder that was open to others). */
  warn?: (message: string) => void;
  /** How often the scheduler ticks and how long its leases hold (tests: much less than the defaults). */
  schedule?: Pick<SchedulerOptions, 'tickMs' | 'leaseMs'>;
}

export interface RunningServer {
  port: number;
  db: Knex;
  /** For the start-up line: "embedded PGlite at /path" or "PostgreSQL repoadmin on host:5432". */
  description: string;
  /** True when the first administrator was created now with the documented password. */
  adminMustChangePassword: boolean;
  /** Work on a schedule, run once across the instances on this database (server/schedule.ts). */
  scheduler: Scheduler;
  /**
   * Stops taking connections, gives requests in flight up to `graceMs` to finish (idle keep-alive
   * connections are closed as they become idle), then closes the database.
   */
  stop(graceMs: number): Promise<void>;
}

function listen(server: http.Server, port: number, host: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/**
 * Answers while the database is being opened: the port is taken before that, so nothing is created
 * when it is not free. Like every answer, with an X-Request-Id, the security headers, a log line
 * and its count (under the route `unmatched`: no route is served yet).
 */
function starting(log: Logger, metrics: Metrics | undefined): http.RequestListener {
  return (request, response) => {
    const started = process.hrtime.bigint();
    const requestId = requestIdFrom(request.headers['x-request-id']);
    const method = request.method ?? 'GET';
    const body = JSON.stringify(errorBody(new AppError('unavailable', 'the server is starting; try again in a moment')));
    response
      .writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS), 'X-Request-Id': requestId, ...SECURITY_HEADERS })
      .end(body);
    if (metrics) countRequest(metrics, method, UNMATCHED_ROUTE, 503, started);
    logRequest(log, requestId, method, (request.url ?? '/').split('?', 1)[0]!, 503, started);
  };
}

function closeServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    // Keep-alive connections become idle as their last request finishes: close them as they do.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    const force = setTimeout(() => {
      server.closeAllConnections();
      resolve();
    }, graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

export async function startServer(config: ServerConfig, options: StartOptions): Promise<RunningServer> {
  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let reads: ReadRouting | undefined;
  let outbox: Outbox | undefined;
  const metrics = config.metrics ? createMetrics(() => database?.db, () => reads) : undefined;
  let handler: http.RequestListener = starting(options.log, metrics);
  const server = createHttpServer((request, response) => handler(request, response), { log: options.log, metrics });
  let port: number;
  try {
    port = await listen(server, config.port, options.host ?? config.host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'EADDRINUSE'
        ? `port ${config.port} is already in use; choose another with --port / REPO_MAN_PORT`
        : `cannot listen on port ${config.port}: ${(error as Error).message}`,
    );
  }

  try {
    database = await openDatabase(config.db);
    for (const warning of database.warnings) options.warn?.(warning);
    const passwords = createPasswords(config.bcryptCost);
    const prepared = await prepareDatabase(database.db, config, passwords);
    if (database.replica) reads = startReadRouting(database.db, database.replica, config.db.read!.maxLagMs, options.log);
    const { db, description, close } = database;
    // Webhook deliveries: every process numbers new events and sends its share (docs/webhooks.md, "Delivery").
    outbox = startOutbox({ db, config, log: options.log, now: options.now ?? (() => new Date()) });
    const appOptions = { db, config, log: options.log, secret: prepared.secret, passwords, metrics, now: options.now, reads, outbox };
    const services = createServices(appOptions);
    handler = createApp(appOptions, services);
    const scheduler = createScheduler(db, { log: options.log, ...options.schedule });
    registerTasks(scheduler, services);
    scheduler.start();
    return {
      port,
      db,
      description,
      adminMustChangePassword: prepared.adminMustChangePassword,
      scheduler,
      async stop(graceMs) {
        await closeServer(server, graceMs);
        await outbox?.stop();
        await scheduler.stop();
        await reads?.stop();
        await close();
      },
    };
  } catch (error) {
    server.close();
    await outbox?.stop().catch(() => {});
    await (reads ? reads.stop() : database?.replica?.destroy())?.catch(() => {});
    await database?.close().catch(() => {});
    throw error;
  }
}
