// `--workers N`: N processes (node:cluster) share the port, so one machine's cores serve requests.
// The primary prepares the database once (schema, signing secret, first administrator), then starts
// the workers, each a whole server; it serves nothing itself but the sum of the workers' metrics.
// Only on a database server: the embedded database is one process's (config.ts refuses it).
//
// The primary never exits unless told to stop: every worker that ends, whenever it ends (before it
// listens included), is replaced, after a pause that doubles while they keep dying, up to 30 s. Only
// when workers never get to serve at all (a setting every worker fails on) does it give up, and then
// it exits non-zero, so that a supervisor (systemd, Docker) sees a failure.
import cluster, { type Worker } from 'node:cluster';
import type { Io } from '../common/io.js';
import { createPasswords } from './auth/passwords.js';
import type { ServerConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { answerMetricsRequests } from './metrics.js';
import { prepareDatabase, type Prepared } from './setup.js';

/** How long the workers get to finish their requests after a stop signal (each has its own grace). */
const STOP_GRACE_MS = 12_000;
/** The first pause before a replacement; it doubles with each death less than STEADY_MS after the last. */
const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 30_000;
/** A minute without a death: the next one is replaced after the first pause again. */
const STEADY_MS = 60_000;
/** Workers that end before they are ready this many times in a row, none ever having served: give up. */
const GIVE_UP_AFTER = 5;
/** What a worker sends the primary once it serves from the database (it listens, answering 503, before). */
export const WORKER_READY = 'repoadmin:worker-ready';

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
  answerMetricsRequests();

  let stopping = false;
  let served = false;
  let everReady = false;
  let failedStarts = 0;
  let delay = RESTART_FIRST_MS;
  let lastDeath = 0;
  const timers = new Set<NodeJS.Timeout>();
  const ready = new Set<Worker>();

  const outcome = new Promise<string>((resolve, reject) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
    cluster.on('message', (worker, message: { type?: string; port?: number }) => {
      if (message?.type !== WORKER_READY) return;
      ready.add(worker);
      everReady = true;
      failedStarts = 0;
      if (!served && ready.size === config.workers) {
        served = true;
        announce(Number(message.port), `${database.description}, ${config.workers} workers`, prepared);
      }
    });
    cluster.on('exit', (worker, code, signal) => {
      const wasReady = ready.delete(worker);
      if (stopping) return;
      const how = signal ?? `exit code ${code}`;
      if (!wasReady) failedStarts++;
      if (!everReady && failedStarts >= GIVE_UP_AFTER) {
        reject(new Error(`${failedStarts} workers in a row ended before they could serve (the last: ${how}); their messages are above`));
        return;
      }
      const now = Date.now();
      if (now - lastDeath > STEADY_MS) delay = RESTART_FIRST_MS;
      lastDeath = now;
      io.err(`worker ${worker.process.pid} ended (${how}); starting another in ${delay / 1000} s`);
      // Not unref'd: a primary whose workers are all gone waits for their replacements.
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!stopping) cluster.fork();
      }, delay);
      timers.add(timer);
      delay = Math.min(delay * 2, RESTART_MAX_MS);
    });
  });
  for (let i = 0; i < config.workers; i++) cluster.fork();

  let failure: unknown;
  try {
    const stopped = await outcome;
    io.err(`${stopped}: stopping ${config.workers} workers; finishing requests in flight`);
  } catch (error) {
    failure = error;
  }
  stopping = true;
  for (const timer of timers) clearTimeout(timer);
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
