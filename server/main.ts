// `repoadmin server`: starts the server (start.ts) with the settings of its arguments and
// environment, says where it listens, and stops gracefully on SIGTERM and SIGINT.
import cluster from 'node:cluster';
import type { Io } from '../common/io.js';
import { runPrimary, WORKER_READY } from './cluster.js';
import { loadConfig } from './config.js';
import { KINDS } from './db/dialects/kinds.js';
import { createLogger } from './log.js';
import { collectStartupGarbage, letYoungGenerationGrow } from './memory.js';
import { DEFAULT_ADMIN_ID } from './services/users.js';
import { startServer } from './start.js';

/** How long in-flight requests get to finish after a stop signal. */
const SHUTDOWN_GRACE_MS = 8_000;

export interface RunOptions {
  /** How the person who started the server runs the command line, for the first-start hint. */
  cli?: string;
}

/** Runs until a stop signal; a failure to start is thrown, for the command line to report. */
/** The start-up lines: the first administrator's password, where the server listens. */
function announce(io: Io, cli: string, port: number, description: string, adminMustChangePassword: boolean): void {
  if (adminMustChangePassword) {
    io.err(
      'first start: created the administrator "admin" with the password "password", accepted only from this machine (loopback) ' +
        'and to be changed before anything else (REPO_MAN_ADMIN_PASSWORD sets another first password):\n' +
        `  ${cli} login --url http://localhost:${port} --username admin && ${cli} user passwd\n` +
        `  or: PUT /v1/users/${DEFAULT_ADMIN_ID}/password with {"password": "<new password>"}`,
    );
  }
  io.err(`repoadmin server listening on http://localhost:${port}, database: ${description}`);
}

/** Runs until a stop signal; a failure to start is thrown, for the command line to report. */
export async function runServer(args: string[], env: NodeJS.ProcessEnv, io: Io, options: RunOptions = {}): Promise<void> {
  const config = loadConfig(args, env);
  if (!KINDS[config.db.kind].embedded) letYoungGenerationGrow();
  const log = createLogger(config.logLevel);
  if (cluster.isPrimary) for (const warning of config.warnings) io.err(`warning: ${warning}`);
  const cli = options.cli ?? 'repoadmin';
  // --workers: the primary prepares the database and starts the workers, each of which runs this.
  if (config.workers > 1 && cluster.isPrimary) {
    await runPrimary(config, io, (port, description, ready) => announce(io, cli, port, description, ready.adminMustChangePassword));
    return;
  }
  // Listen for stop signals before anyone can learn the address and send one.
  const stopSignal = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  const starting = startServer(config, { log, warn: (warning) => io.err(`warning: ${warning}`) });
  // A start that hangs (a database that never answers, a huge bcrypt cost) can still be stopped: a
  // stop signal before the server is ready ends the process, as the signal's default would.
  const early = await Promise.race([starting.then(() => undefined), stopSignal]);
  if (early !== undefined) {
    if (cluster.isPrimary) io.err(`${early} while starting: stopping before the server was ready`);
    log.flush();
    process.exit(early === 'SIGINT' ? 130 : 143);
  }
  const server = await starting;
  if (KINDS[config.db.kind].embedded) collectStartupGarbage();
  // A worker of --workers stays quiet: it tells the primary, which says where the workers listen.
  if (cluster.isPrimary) announce(io, cli, server.port, server.description, server.adminMustChangePassword);
  else process.send?.({ type: WORKER_READY, port: server.port });

  const stopped = await stopSignal;
  // Workers stop quietly (also above, while starting): the primary says it once for all of them.
  if (cluster.isPrimary) io.err(`${stopped}: stopping; finishing requests in flight`);
  await server.stop(SHUTDOWN_GRACE_MS);
  log.flush();
  if (cluster.isPrimary) io.err('stopped');
}
