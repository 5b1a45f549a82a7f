// config -> database -> migrate -> app -> listen; graceful stop on SIGTERM and SIGINT.
import cluster from 'node:cluster';
import http from 'node:http';
import type { Io } from '../cli/deps.js';
import { EXIT_CODE, isAppError } from '../common/errors.js';
import { createApp } from './app.js';
import { createPasswords } from './auth/passwords.js';
import { runPrimary } from './cluster.js';
import { createHttpServer } from './http-server.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { createLogger } from './log.js';
import { collectStartupGarbage, letYoungGenerationGrow } from './memory.js';
import { type Prepared, prepareDatabase } from './setup.js';
import { DEFAULT_ADMIN_ID } from './services/users.js';

/** How long in-flight requests get to finish after a stop signal. */
const SHUTDOWN_GRACE_MS = 8_000;

function listen(server: http.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** The start-up lines: the first administrator's password, where the server listens. */
function announce(io: Io, port: number, description: string, prepared: Prepared): void {
  if (prepared.adminMustChangePassword) {
    io.err(
      'first start: created the administrator "admin" with the password "password"; it must be changed before anything else:\n' +
        `  repoadmin login --username admin && repoadmin user passwd\n` +
        `  or: PUT /v1/users/${DEFAULT_ADMIN_ID}/password with {"password": "<new password>"}`,
    );
  }
  io.err(`repoadmin server listening on http://localhost:${port}, database: ${description}`);
}

export async function runServer(args: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let close: (() => Promise<void>) | undefined;
  try {
    const config = loadConfig(args, env);
    if (config.db.kind !== 'pglite') letYoungGenerationGrow();
    const log = createLogger(config.logLevel);
    if (cluster.isPrimary) for (const warning of config.warnings) io.err(`warning: ${warning}`);
    if (config.workers > 1 && cluster.isPrimary) return await runPrimary(config, io, (port, description, ready) => announce(io, port, description, ready));
    const database = await openDatabase(config.db);
    close = database.close;
    for (const warning of database.warnings) io.err(`warning: ${warning}`);
    const passwords = createPasswords(config.bcryptCost);
    const prepared = await prepareDatabase(database.db, config, passwords);
    const app = createApp({ db: database.db, config, log, secret: prepared.secret, passwords });

    const server = createHttpServer(app.callback());
    // Listen for stop signals before anyone can learn the address and send one.
    const stopSignal = new Promise<string>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    let port: number;
    try {
      port = await listen(server, config.port);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Error(
        code === 'EADDRINUSE'
          ? `port ${config.port} is already in use; choose another with --port / REPO_MAN_PORT`
          : `cannot listen on port ${config.port}: ${(error as Error).message}`,
      );
    }
    // A worker of --workers: the primary says where the workers listen.
    if (config.db.kind === 'pglite') collectStartupGarbage();
    if (cluster.isPrimary) announce(io, port, database.description, prepared);

    const stopped = await stopSignal;
    io.err(`${stopped}: stopping; finishing requests in flight`);
    await new Promise<void>((resolve) => {
      // Keep-alive connections become idle as their last request finishes: close them as they do.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      const force = setTimeout(() => {
        server.closeAllConnections();
        resolve();
      }, SHUTDOWN_GRACE_MS);
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
    await database.close();
    close = undefined;
    log.flush();
    io.err('stopped');
    return 0;
  } catch (error) {
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    await close?.().catch(() => {});
    return isAppError(error) ? Math.max(EXIT_CODE[error.code], 1) : 1;
  }
}
