// The sender of the webhook outbox (server/db/webhooks.ts): numbers new events and queues their
// deliveries, claims due deliveries of a webhook in batches with a lease, sends them from the batch
// (at most 16 requests at once per process, 2 per webhook across all processes) over kept-alive
// connections, and records the finished attempts together, each with its retry or its end. Every
// process runs one; they share the work through the database. Publishing never waits for it.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeAudit } from '../db/audit.js';
import {
  type AttemptRecord,
  type ClaimedBatch,
  type StoredDelivery,
  type WebhookTarget,
  claimDeliveries,
  disableWebhook,
  isFailingLong,
  outboxWork,
  recordAttempts,
  releaseDeliveries,
} from '../db/webhooks.js';
import { addressRules } from '../webhooks/addresses.js';
import { type Attempt, SEND_TIMEOUT_MS, keepAliveAgents, send } from '../webhooks/send.js';
import type { Services } from './context.js';
import { EVENT_PAGE, dispatchEvents } from './events.js';
import { failureFields } from '../db/faults.js';

export const PER_PROCESS = 16;
export const PER_WEBHOOK = 2;
/** A claim outlives the longest attempt (10 s) with room to record it; then another sender may take it. */
export const LEASE_MS = SEND_TIMEOUT_MS + 20_000;
/**
 * An attempt of a claimed delivery starts only while its lease has this long left after the longest
 * attempt: room to record it. What a batch could not start by then is given back (releaseDeliveries).
 */
const RECORD_ROOM_MS = 10_000;
/** The most deliveries of one webhook claimed at once. */
export const MAX_BATCH = 256;
/**
 * Rounds (numbering new events, claiming) start at most this often while no backlog is left: each
 * round's statements then serve the deliveries of this long rather than one or two at a time.
 */
const ROUND_MS = 100;
/** The longest a finished attempt waits to be recorded with others (its lease leaves RECORD_ROOM_MS). */
export const RECORD_DELAY_MS = 200;
/** A batch is sized to take about this part of the time a lease leaves to start attempts, at the webhook's pace. */
const BATCH_SHARE = 0.25;
/** A webhook is disabled after this many failed attempts in a row with no success for AUTO_DISABLE_DAYS. */
export const AUTO_DISABLE_FAILURES = 20;
export const AUTO_DISABLE_DAYS = 5;
/** The longest Retry-After honoured. */
const RETRY_AFTER_MAX_MS = 24 * 3_600_000;

export type OutboxServices = Pick<Services, 'db' | 'config' | 'log' | 'now'>;

/** A wait of the schedule with up to 20% either way, so that retries of many deliveries spread out. */
export function withJitter(ms: number, random = Math.random): number {
  return Math.round(ms * (0.8 + 0.4 * random()));
}

/**
 * When to try again after a failed attempt, in milliseconds; undefined: no more attempts. The
 * schedule's wait for this attempt (with jitter), or the receiver's Retry-After when longer.
 */
export function retryIn(schedule: number[], attemptsBefore: number, attempt: Attempt): number | undefined {
  if (attempt.status === 410 || attemptsBefore >= schedule.length) return undefined;
  const wait = withJitter(schedule[attemptsBefore]!);
  return Math.max(wait, Math.min(attempt.retryAfterMs ?? 0, RETRY_AFTER_MAX_MS));
}

/**
 * How many deliveries of a webhook to claim at once: as many as it takes about BATCH_SHARE of the
 * time a lease leaves to start them, at the pace its recent attempts went (`attemptMs`, undefined
 * before the first), `inFlight` at a time; at least `inFlight`, at most MAX_BATCH.
 */
export function batchSize(attemptMs: number | undefined, inFlight: number): number {
  if (attemptMs === undefined) return inFlight;
  const startWindow = LEASE_MS - SEND_TIMEOUT_MS - RECORD_ROOM_MS;
  const fits = Math.floor(((startWindow * BATCH_SHARE) / Math.max(1, attemptMs)) * inFlight);
  return Math.min(MAX_BATCH, Math.max(inFlight, fits));
}

/** Disables a webhook, logs and audits it (not a request: the actor is the server). */
async function disable(services: OutboxServices, webhookId: string, reason: string): Promise<void> {
  if (!(await disableWebhook(services.db, webhookId, reason))) return;
  services.log.warn({ webhookId, reason }, 'webhook disabled');
  await writeAudit(services.db, { action: 'webhook.disabled', target: webhookId, outcome: 'ok', details: { reason } });
}

export interface Outbox {
  /** Looks for work now rather than at the next poll (e.g. after a publish). */
  wake(): void;
  /** Stops claiming, waits for the attempts in flight. */
  stop(): Promise<void>;
}

export interface OutboxOptions {
  pollMs?: number;
  /** The least time from one round's start to the next's while no backlog is left (ROUND_MS). */
  roundMs?: number;
  /** A claim's lease (LEASE_MS); for tests. */
  leaseMs?: number;
  perProcess?: number;
}

/** A claimed delivery waiting in its batch. */
interface Queued {
  delivery: StoredDelivery;
  leaseToken: string;
  /** performance.now() after which it may no longer start (its lease leaves too little). */
  startBy: number;
}

/** What this sender holds of one webhook: the batch it claimed, until every delivery of it is recorded or given back. */
interface Held {
  webhook: WebhookTarget;
  inFlight: number;
  queue: Queued[];
  sending: number;
  /** Deliveries claimed and not yet recorded or given back: the webhook is claimed for again at 0. */
  outstanding: number;
}

export function startOutbox(services: OutboxServices, options: OutboxOptions = {}): Outbox {
  const rules = addressRules(services.config.events.allowNetworks);
  const agents = keepAliveAgents(rules);
  const pollMs = options.pollMs ?? 250;
  const roundMs = Math.min(pollMs, options.roundMs ?? ROUND_MS);
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const perProcess = options.perProcess ?? PER_PROCESS;
  const held = new Map<string, Held>();
  /** How long a webhook's recent attempts took (a moving average), for the size of its next batch. */
  const pace = new Map<string, number>();
  const finished: AttemptRecord[] = [];
  const work = new Set<Promise<void>>();
  let sending = 0;
  let recording: Promise<void> | undefined;
  let recordTimer: NodeJS.Timeout | undefined;
  let stopping = false;
  let wakeUp = new AbortController();
  const wake = () => wakeUp.abort();
  const stopped = new AbortController();
  const track = (promise: Promise<void>) => {
    work.add(promise);
    promise
      .catch((error: unknown) => services.log.error(failureFields(error), 'webhook outbox: unexpected failure'))
      .finally(() => work.delete(promise));
  };

  /** Gives back deliveries not sent; their lease ends anyway if that fails. */
  const release = (entry: Held, items: Queued[]) => {
    if (items.length === 0) return;
    track(releaseDeliveries(services.db, items.map((q) => ({ id: q.delivery.id, leaseToken: q.leaseToken })))
      .catch((error: unknown) => services.log.warn(failureFields(error), 'webhook outbox: claimed deliveries not given back; their lease ends'))
      .finally(() => settle(entry, items.length)));
  };

  /** `count` deliveries of a webhook are done with (recorded or given back); when none is left, it is claimed for again. */
  const settle = (entry: Held, count: number) => {
    entry.outstanding -= count;
    if (entry.outstanding === 0 && held.get(entry.webhook.id) === entry) {
      held.delete(entry.webhook.id);
      wake();
    }
  };

  /** Starts attempts from the batches while there is room: per webhook its `inFlight`, per process `perProcess`. */
  const pump = () => {
    let started = true;
    while (started && sending < perProcess && !stopping) {
      started = false;
      for (const entry of held.values()) {
        if (sending >= perProcess) break;
        if (entry.sending >= entry.inFlight || entry.queue.length === 0) continue;
        const next = entry.queue.shift()!;
        if (performance.now() > next.startBy) {
          release(entry, [next, ...entry.queue.splice(0)]);
          continue;
        }
        started = true;
        attempt(entry, next);
      }
    }
  };

  const attempt = (entry: Held, item: Queued) => {
    const { delivery } = item;
    const { webhook } = entry;
    entry.sending++;
    sending++;
    track(send({ url: webhook.url, id: delivery.id, body: delivery.body, secrets: webhook.secrets }, rules, SEND_TIMEOUT_MS, agents).then((result) => {
      entry.sending--;
      sending--;
      const previous = pace.get(webhook.id);
      pace.set(webhook.id, previous === undefined ? result.durationMs : 0.8 * previous + 0.2 * result.durationMs);
      const retryInMs = result.error === undefined ? undefined : retryIn(services.config.events.retrySchedule, delivery.attempts, result);
      finished.push({ claim: { id: delivery.id, webhookId: webhook.id, leaseToken: item.leaseToken }, result, retryInMs });
      record();
      pump();
    }));
  };

  /**
   * Records the finished attempts, all that are there in one go. At once when a webhook's batch is
   * done (its next batch waits for it), an answer disables the webhook (410) or the sender stops;
   * else within RECORD_DELAY_MS, so that one transaction records many attempts.
   */
  const record = (now = false) => {
    if (recording || finished.length === 0) return;
    const batchDone = finished.some((r) => {
      const entry = held.get(r.claim.webhookId);
      return !entry || (entry.queue.length === 0 && entry.sending === 0);
    });
    if (!now && !batchDone && !stopping && finished.length < MAX_BATCH && !finished.some((r) => r.result.status === 410)) {
      recordTimer ??= setTimeout(() => {
        recordTimer = undefined;
        record(true);
      }, RECORD_DELAY_MS);
      return;
    }
    clearTimeout(recordTimer);
    recordTimer = undefined;
    const records = finished.splice(0);
    recording = (async () => {
      try {
        const { recorded, webhooks } = await recordAttempts(services.db, records);
        for (const [webhookId, now] of webhooks) await afterRecord(webhookId, now, records.filter((r) => recorded.has(r.claim.id) && r.claim.webhookId === webhookId));
      } catch (error) {
        for (const r of records) services.log.error({ ...failureFields(error), deliveryId: r.claim.id }, 'webhook delivery not recorded');
      }
      for (const r of records) {
        const entry = held.get(r.claim.webhookId);
        if (entry) settle(entry, 1);
      }
    })().finally(() => {
      recording = undefined;
      record();
    });
    track(recording);
  };

  /** After a webhook's attempts are recorded: disables it when an answer or its record says so; a batch of a webhook no longer active is given back. */
  const afterRecord = async (webhookId: string, now: WebhookTarget, recorded: AttemptRecord[]) => {
    let active = now.active;
    try {
      if (recorded.some((r) => r.result.status === 410)) {
        await disable(services, webhookId, 'the receiver answered 410 Gone');
        active = false;
      } else if (recorded.some((r) => r.result.error !== undefined) && (await isFailingLong(services.db, webhookId, AUTO_DISABLE_FAILURES, AUTO_DISABLE_DAYS, services.now()))) {
        await disable(services, webhookId, `${AUTO_DISABLE_FAILURES} failed deliveries in a row and no success for ${AUTO_DISABLE_DAYS} days`);
        active = false;
      }
    } finally {
      const entry = held.get(webhookId);
      if (entry) {
        // A changed URL or a rotated secret applies to the rest of the batch.
        entry.webhook = { ...now, active };
        if (!active) release(entry, entry.queue.splice(0));
      }
    }
  };

  /** One round: new events numbered, deliveries claimed. True when a backlog is left (a full page or batch). */
  const round = async (): Promise<boolean> => {
    const work = await outboxWork(services.db);
    const numbered = work.events ? await dispatchEvents(services) : 0;
    if (stopping || held.size >= perProcess) return numbered >= EVENT_PAGE;
    // Numbering may have queued deliveries the look could not see.
    if (!work.deliveries && numbered === 0) return false;
    const claimedAt = performance.now();
    const batches: ClaimedBatch[] = await claimDeliveries(services.db, {
      webhooks: perProcess - held.size,
      perWebhook: PER_WEBHOOK,
      batch: (webhookId, inFlight) => batchSize(pace.get(webhookId), inFlight),
      leaseMs,
      except: [...held.keys()],
    });
    const startBy = claimedAt + leaseMs - SEND_TIMEOUT_MS - RECORD_ROOM_MS;
    for (const batch of batches) {
      const queue = batch.deliveries.map((delivery) => ({ delivery, leaseToken: batch.leaseToken, startBy }));
      held.set(batch.webhook.id, { webhook: batch.webhook, inFlight: batch.inFlight, queue, sending: 0, outstanding: queue.length });
    }
    pump();
    return numbered >= EVENT_PAGE || batches.some((b) => b.deliveries.length >= MAX_BATCH);
  };

  const loop = (async () => {
    while (!stopping) {
      const started = performance.now();
      let backlog = false;
      try {
        backlog = await round();
      } catch (error) {
        services.log.warn(failureFields(error), 'webhook outbox: the database did not answer; trying again');
      }
      if (stopping) break;
      if (backlog) continue;
      await sleep(pollMs, undefined, { signal: wakeUp.signal }).catch(() => undefined);
      if (wakeUp.signal.aborted) wakeUp = new AbortController();
      // Woken early (a batch done): the next round waits out the rest of roundMs.
      const rest = started + roundMs - performance.now();
      if (rest > 0 && !stopping) await sleep(rest, undefined, { signal: stopped.signal }).catch(() => undefined);
    }
  })();

  return {
    wake,
    async stop() {
      stopping = true;
      wake();
      stopped.abort();
      await loop;
      // What waits in a batch is given back at once rather than when its lease ends.
      for (const entry of held.values()) release(entry, entry.queue.splice(0));
      record(true);
      while (work.size > 0 || recordTimer) {
        await Promise.allSettled([...work]);
        record(true);
      }
      agents.destroy();
    },
  };
}
