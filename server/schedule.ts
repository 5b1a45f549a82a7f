// Work on a schedule, run once across all instances on one database. Every instance ticks; at each
// tick, a task that is due is claimed through the database (server/db/leases.ts) by one instance,
// which runs it while renewing its lease; the next run is due `every` ms (or at `next(now)`) after.
// An instance that dies while running a task stops renewing: its lease runs out, and another
// instance takes the task at its next tick (within LEASE_MS + TICK_MS, under a minute).
//
//   scheduler.register({ name: 'trash.empty', every: 60 * 60_000, run: (signal) => emptyTrash(db, signal) });
//   scheduler.register({ name: 'retention', next: (now) => dailyAt('03:30', now), run: ... });
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { claimDueLease, databaseNow, ensureLease, releaseLease, renewLease } from './db/leases.js';
import { instanceName } from './log.js';
import { failureFields } from './db/faults.js';

export interface ScheduledTask {
  /** Unique across the server, e.g. 'webhooks.retry'; names the task's row and its log lines. */
  name: string;
  /** Run every this many ms (from the end of one run to the next)... */
  every?: number;
  /** ...or at the time this returns after `now` (database time), e.g. daily at a configured hour. */
  next?: (now: Date) => Date;
  /** The work. `signal` is aborted when this instance stops or has lost the task's lease. */
  run(signal: AbortSignal): Promise<void>;
}

export interface SchedulerOptions {
  log: Logger;
  /** How often every instance looks for due tasks. */
  tickMs?: number;
  /** How long a claim holds without renewal: how soon another instance takes over from a dead one. */
  leaseMs?: number;
  /** This instance's name in the lease: host name, pid, and a random part (tests run several in one process). */
  instance?: string;
}

export interface Scheduler {
  /** Adds a task; registering before or after start() are both fine. */
  register(task: ScheduledTask): void;
  /** Starts ticking. */
  start(): void;
  /** Runs one tick now: claims and runs what is due (tests; start() calls it on its timer). */
  tick(): Promise<void>;
  /** Stops ticking, aborts running tasks and waits for them. */
  stop(): Promise<void>;
}

export const TICK_MS = 10_000;
export const LEASE_MS = 30_000;

function nextRun(task: ScheduledTask, now: Date): Date {
  return task.next ? task.next(now) : new Date(now.getTime() + (task.every ?? 0));
}

export function createScheduler(db: Knex, options: SchedulerOptions): Scheduler {
  const tickMs = options.tickMs ?? TICK_MS;
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const instance = options.instance ?? `${instanceName()}:${randomBytes(4).toString('hex')}`;
  const tasks = new Map<string, ScheduledTask>();
  const running = new Map<string, Promise<void>>();
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> = Promise.resolve();

  async function runClaimed(task: ScheduledTask): Promise<void> {
    const lost = new AbortController();
    const signal = AbortSignal.any([stopping.signal, lost.signal]);
    const renewal = setInterval(() => {
      renewLease(db, task.name, instance, leaseMs).then(
        (held) => held || lost.abort(new Error('the lease was lost')),
        () => undefined,
      );
    }, leaseMs / 3);
    const started = Date.now();
    try {
      await task.run(signal);
      options.log.info({ task: task.name, durationMs: Date.now() - started }, 'scheduled task done');
    } catch (error) {
      options.log.error({ task: task.name, ...failureFields(error) }, 'scheduled task failed');
    } finally {
      clearInterval(renewal);
    }
    if (lost.signal.aborted) return;
    // The next run is due from the end of this one; a stop during the run lets the lease run out
    // instead, so that another instance runs the task again.
    if (!stopping.signal.aborted) await releaseLease(db, task.name, instance, nextRun(task, await databaseNow(db)));
  }

  async function tickOnce(): Promise<void> {
    for (const task of tasks.values()) {
      if (stopping.signal.aborted) return;
      if (running.has(task.name)) continue;
      try {
        await ensureLease(db, task.name, task.next ? task.next(await databaseNow(db)) : await databaseNow(db));
        if (!(await claimDueLease(db, task.name, instance, leaseMs))) continue;
      } catch (error) {
        // The database is away: the next tick tries again.
        options.log.warn({ task: task.name, ...failureFields(error) }, 'could not claim a scheduled task');
        continue;
      }
      const run = runClaimed(task)
        .catch((error: unknown) => options.log.error({ task: task.name, ...failureFields(error) }, 'scheduled task failed'))
        .finally(() => running.delete(task.name));
      running.set(task.name, run);
    }
  }

  return {
    register(task) {
      if (tasks.has(task.name)) throw new Error(`a scheduled task named ${task.name} is registered already`);
      if ((task.every === undefined) === (task.next === undefined)) throw new Error(`scheduled task ${task.name}: give either every or next`);
      tasks.set(task.name, task);
    },
    start() {
      if (timer) return;
      timer = setInterval(() => {
        ticking = ticking.then(tickOnce);
      }, tickMs);
      timer.unref();
      ticking = ticking.then(tickOnce);
    },
    tick() {
      ticking = ticking.then(tickOnce);
      return ticking;
    },
    async stop() {
      clearInterval(timer);
      stopping.abort(new Error('the server is stopping'));
      await ticking;
      await Promise.all(running.values());
    },
  };
}
