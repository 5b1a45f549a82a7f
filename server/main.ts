// config -> listen (503 until ready) -> database -> migrate -> app; graceful stop on SIGTERM and SIGINT.
import http from 'node:http';
import type { Io } from '../cli/deps.js';
import { AppError, EXIT_CODE, isAppError } from '../common/errors.js';
import { createApp } from './app.js';
import { createPasswords } from './auth/passwords.js';
import { createHttpServer } from './http-server.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { createLogger } from './log.js';
import { errorBody } from './middleware/errors.js';
import { prepareDatabase } from './setup.js';
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

/** Answers while the database is being opened: the port is taken before that, so nothing is created when it is not free. */
function starting(_request: http.IncomingMessage, response: http.ServerResponse): void {
  const body = JSON.stringify(errorBody(new AppError('unavailable', 'the server is starting; try again in a moment')));
  response.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' }).end(body);
}

export interface RunOptions {
  /** How the person who started the server runs the command line, for the first-start hint. */
  cli?: string;
}

export async function runServer(args: string[], env: NodeJS.ProcessEnv, io: Io, options: RunOptions = {}): Promise<number> {
  let close: (() => Promise<void>) | undefined;
  let stopListening: (() => void) | undefined;
  try {
    const config = loadConfig(args, env);
    const log = createLogger(config.logLevel);
    for (const warning of config.warnings) io.err(`warning: ${warning}`);

    let handler: http.RequestListener = starting;
    const server = createHttpServer((request, response) => handler(request, response));
    // Listen for stop signals before anyone can learn the address and send one.
    const stopSignal = new Promise<string>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    let port: number;
    try {
      port = await listen(server, config.port);
      stopListening = () => server.close();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Error(
        code === 'EADDRINUSE'
          ? `port ${config.port} is already in use; choose another with --port / REPO_MAN_PORT`
          : `cannot listen on port ${config.port}: ${(error as Error).message}`,
      );
    }

    const database = await openDatabase(config.db);
    close = database.close;
    for (const warning of database.warnings) io.err(`warning: ${warning}`);
    const passwords = createPasswords(config.bcryptCost);
    const prepared = await prepareDatabase(database.db, config, passwords);
    handler = createApp({ db: database.db, config, log, secret: prepared.secret, passwords }).callback();

    if (prepared.adminMustChangePassword) {
      const cli = options.cli ?? 'repoadmin';
      io.err(
        'first start: created the administrator "admin" with the password "password"; it must be changed before anything else:\n' +
          `  ${cli} login --url http://localhost:${port} --username admin && ${cli} user passwd\n` +
          `  or: PUT /v1/users/${DEFAULT_ADMIN_ID}/password with {"password": "<new password>"}`,
      );
    }

    io.err(`repoadmin server listening on http://localhost:${port}, database: ${database.description}`);

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
    stopListening?.();
    await close?.().catch(() => {});
    return isAppError(error) ? Math.max(EXIT_CODE[error.code], 1) : 1;
  }
}
