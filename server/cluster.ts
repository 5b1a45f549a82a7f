// `--workers N`: N processes (node:cluster) share the port, so one machine's cores serve requests.
// The primary prepares the database once (schema, signing secret, first administrator), then starts
// the workers, each a whole server; it serves nothing itself. Only on a database server: the
// embedded database is one process's (config.ts refuses it).
import cluster, { type Worker } from 'node:cluster';
import type { Io } from '../common/io.js';
import { createPasswords } from './auth/passwords.js';
import type { ServerConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { prepareDatabase, type Prepared } from './setup.js';

/** How long the workers get to finish their requests after a stop signal (each has its own grace). */
const STOP_GRACE_MS = 12_000;
/** A worker that ends on its own is replaced after this pause, so a crash loop does not spin. */
const RESTART_DELAY_MS = 1_000;

export async function runPrimary(
  config: ServerConfig,
  io: Io,
  announce: (port: number, description: string, prepared: Prepared) => void,
): Promise<void> {
  const database = await openDatabase(config.db);
  let prepared: Prepared;
  try {
    prepared = await prepareDatabase(database.db, config, createPasswords(config.bcryptCost));
  } finally {
    await database.close();
  }

  let stopping = false;
  const stopSignal = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  const listening = new Map<Worker, number>();
  const started = new Promise<number>((resolve, reject) => {
    cluster.on('listening', (worker, address) => {
      listening.set(worker, address.port);
      if (listening.size === config.workers) resolve(address.port);
    });
    cluster.on('exit', (worker, code, signal) => {
      const wasListening = listening.delete(worker);
      if (stopping) return;
      if (!wasListening) {
        reject(new Error(`a worker ended before it could serve (${signal ?? `exit code ${code}`}); its messages are above`));
        return;
      }
      io.err(`worker ${worker.process.pid} ended (${signal ?? `exit code ${code}`}); starting another`);
      setTimeout(() => {
        if (!stopping) cluster.fork();
      }, RESTART_DELAY_MS).unref();
    });
  });
  for (let i = 0; i < config.workers; i++) cluster.fork();

  let failure: unknown;
  try {
    const port = await Promise.race([started, stopSignal.then(() => undefined)]);
    if (port !== undefined) {
      announce(port, `${database.description}, ${config.workers} workers`, prepared);
      const stopped = await stopSignal;
      io.err(`${stopped}: stopping ${config.workers} workers; finishing requests in flight`);
    }
  } catch (error) {
    failure = error;
  }
  stopping = true;
  await stopWorkers();
  if (failure) throw failure;
  io.err('stopped');
}

async function stopWorkers(): Promise<void> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve) => {
          const force = setTimeout(() => worker.process.kill('SIGKILL'), STOP_GRACE_MS);
          worker.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          worker.process.kill('SIGTERM');
        }),
    ),
  );
}
