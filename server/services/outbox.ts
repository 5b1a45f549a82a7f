// The sender of the webhook outbox (server/db/webhooks.ts), as named steps (docs/webhooks.md,
// "Delivery"): number new events and fan them out into deliveries (dispatchEvents), claim due
// deliveries of many webhooks in batches with a lease (claim), start attempts from the batches while
// there is room (startable, then send: at most 16 requests at once per process, 2 per webhook across
// all processes) over kept-alive connections, and record the finished attempts together (record),
// each with its retry (retryIn: the schedule) or its end. The loop that runs the steps keeps its state
// in one Sender. Every process runs one; they share the work through the database. Publishing never
// waits for it; the event feed only wakes it.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeAudit } from '../db/audit.js';
import {
  type AttemptRecord,
  type ClaimedBatch,
  type ClaimedDelivery,
  type WebhookTarget,
  claimDeliveries,
  disableWebhook,
  isFailingLong,
  outboxWork,
  recordAttempts,
  releaseDeliveries,
} from '../db/webhooks.js';
import { type AddressRules, addressRules } from '../webhooks/addresses.js';
import { type Agents, type Attempt, SEND_TIMEOUT_MS, keepAliveAgents, send } from '../webhooks/send.js';
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
  /** Looks for work now rather than at the next poll (e.g. events waiting for their number). */
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
  /** Called after each round, done or failed; for tests, which wait for rounds rather than for time. */
  onRound?: () => void;
}

/** A claimed delivery waiting in its batch. */
export interface Queued {
  delivery: ClaimedDelivery;
  leaseToken: string;
  /** performance.now() after which it may no longer start (its lease leaves too little). */
  startBy: number;
}

/** What this sender holds of one webhook: the batch it claimed, until every delivery of it is recorded or given back. */
export interface Held {
  webhook: WebhookTarget;
  inFlight: number;
  queue: Queued[];
  sending: number;
  /** Deliveries claimed and not yet recorded or given back: the webhook is claimed for again at 0. */
  outstanding: number;
}

/** The settings a sender runs with. */
interface Settings {
  pollMs: number;
  roundMs: number;
  leaseMs: number;
  perProcess: number;
}

/** One sender's state: what the steps below read and change, in one place rather than in a closure. */
interface Sender {
  services: OutboxServices;
  settings: Settings;
  rules: AddressRules;
  agents: Agents;
  /** The batches held, by webhook id, in the order they were claimed. */
  held: Map<string, Held>;
  /** How long a webhook's recent attempts took (a moving average), for the size of its next batch. */
  pace: Map<string, number>;
  /** Finished attempts waiting to be recorded together. */
  finished: Finished;
  /** Attempts in flight in this process. */
  sending: number;
  recording: Promise<void> | undefined;
  recordTimer: NodeJS.Timeout | undefined;
  stopping: boolean;
  /** Aborted to end the loop's wait early (wake); replaced after each wait. */
  wakeUp: AbortController;
  stopped: AbortController;
  /** Sends, records and give-backs under way, for stop() to wait on. */
  work: Set<Promise<void>>;
  onRound?: () => void;
}

// The steps: plain functions of their inputs.

/**
 * Claims due deliveries for up to `room` webhooks other than `except` (one claim for all of them,
 * claimDeliveries), each batch sized by its webhook's pace: the batches to hold. Their attempts may
 * start until `claimedAt` plus what the lease leaves once the longest attempt and its record fit.
 */
export async function claim(
  db: OutboxServices['db'],
  input: { room: number; except: string[]; pace: ReadonlyMap<string, number>; leaseMs: number; claimedAt: number },
): Promise<Held[]> {
  const batches: ClaimedBatch[] = await claimDeliveries(db, {
    webhooks: input.room,
    perWebhook: PER_WEBHOOK,
    batch: (webhookId, inFlight) => batchSize(input.pace.get(webhookId), inFlight),
    leaseMs: input.leaseMs,
    except: input.except,
  });
  const startBy = input.claimedAt + input.leaseMs - SEND_TIMEOUT_MS - RECORD_ROOM_MS;
  return batches.map((batch) => {
    const queue = batch.deliveries.map((delivery) => ({ delivery, leaseToken: batch.leaseToken, startBy }));
    return { webhook: batch.webhook, inFlight: batch.inFlight, queue, sending: 0, outstanding: queue.length };
  });
}

/** What to do next with the held batches: the attempts to start, and what may no longer start, to give back. */
export interface Startable {
  start: { entry: Held; item: Queued }[];
  giveBack: { entry: Held; items: Queued[] }[];
}

/**
 * Takes from the batches' queues the attempts to start now, one webhook after another in turn:
 * per webhook up to its `inFlight`, in all up to `room` (the process's). A delivery whose start time
 * has passed (`now` is performance.now()) is given back, with the rest of its batch.
 */
export function startable(held: Iterable<Held>, room: number, now: number): Startable {
  const plan: Startable = { start: [], giveBack: [] };
  const entries = [...held];
  const planned = new Map<Held, number>();
  let started = true;
  while (started && plan.start.length < room) {
    started = false;
    for (const entry of entries) {
      if (plan.start.length >= room) break;
      if (entry.sending + (planned.get(entry) ?? 0) >= entry.inFlight || entry.queue.length === 0) continue;
      const next = entry.queue.shift()!;
      if (now > next.startBy) {
        plan.giveBack.push({ entry, items: [next, ...entry.queue.splice(0)] });
        continue;
      }
      started = true;
      planned.set(entry, (planned.get(entry) ?? 0) + 1);
      plan.start.push({ entry, item: next });
    }
  }
  return plan;
}

/** Sends one attempt of a claimed delivery: its record, with when to try again when it failed (retryIn). */
export async function sendAttempt(
  webhook: WebhookTarget,
  item: Queued,
  transport: { rules: AddressRules; agents: Agents; retrySchedule: number[] },
): Promise<AttemptRecord> {
  const { delivery } = item;
  const result = await send({ url: webhook.url, id: delivery.id, body: delivery.body, secrets: webhook.secrets }, transport.rules, SEND_TIMEOUT_MS, transport.agents);
  const retryInMs = result.error === undefined ? undefined : retryIn(transport.retrySchedule, delivery.attempts, result);
  return { claim: { id: delivery.id, webhookId: webhook.id, leaseToken: item.leaseToken }, result, retryInMs };
}

/** A webhook's pace after an attempt that took `durationMs`: a moving average. */
export function nextPace(previous: number | undefined, durationMs: number): number {
  return previous === undefined ? durationMs : 0.8 * previous + 0.2 * durationMs;
}

/**
 * Finished attempts waiting to be recorded, with what recordWhen asks of them kept as they come: the
 * webhooks they are of (mostly one) and whether a receiver answered 410. Asking it of every record
 * at each attempt's end cost a batch of 256 some 30,000 look-ups.
 */
export interface Finished {
  records: AttemptRecord[];
  webhooks: Set<string>;
  gone: boolean;
}

export const noneFinished = (): Finished => ({ records: [], webhooks: new Set(), gone: false });

export function addFinished(finished: Finished, record: AttemptRecord): void {
  finished.records.push(record);
  finished.webhooks.add(record.claim.webhookId);
  if (record.result.status === 410) finished.gone = true;
}

/**
 * When to record the finished attempts: `now` when a webhook's batch is done (its next batch waits
 * for the record), an answer disables a webhook (410), the sender stops or enough are waiting;
 * `later` (within RECORD_DELAY_MS) otherwise, so that one transaction records many.
 */
export function recordWhen(finished: Finished, held: ReadonlyMap<string, Held>, stopping: boolean): 'now' | 'later' {
  let batchDone = false;
  for (const webhookId of finished.webhooks) {
    const entry = held.get(webhookId);
    batchDone = !entry || (entry.queue.length === 0 && entry.sending === 0);
    if (batchDone) break;
  }
  return batchDone || stopping || finished.records.length >= MAX_BATCH || finished.gone ? 'now' : 'later';
}

/** Each webhook of the recorded attempts as it is now, and whether it is still to be sent to. */
export type Recorded = Map<string, WebhookTarget>;

/**
 * Records finished attempts in one transaction (recordAttempts), then disables a webhook whose
 * receiver answered 410 or that has failed too long (logged and audited): each webhook as it is now,
 * `active` false when it was disabled. Filled into `judged` as it goes, so that what was learnt
 * before a failure is kept.
 */
export async function record(services: OutboxServices, records: AttemptRecord[], judged: Recorded = new Map()): Promise<Recorded> {
  const { recorded, webhooks } = await recordAttempts(services.db, records);
  for (const [webhookId, now] of webhooks) {
    judged.set(webhookId, now);
    const mine = records.filter((r) => recorded.has(r.claim.id) && r.claim.webhookId === webhookId);
    if (mine.some((r) => r.result.status === 410)) {
      await disable(services, webhookId, 'the receiver answered 410 Gone');
      judged.set(webhookId, { ...now, active: false });
    } else if (mine.some((r) => r.result.error !== undefined) && (await isFailingLong(services.db, webhookId, AUTO_DISABLE_FAILURES, AUTO_DISABLE_DAYS, services.now()))) {
      await disable(services, webhookId, `${AUTO_DISABLE_FAILURES} failed deliveries in a row and no success for ${AUTO_DISABLE_DAYS} days`);
      judged.set(webhookId, { ...now, active: false });
    }
  }
  return judged;
}

// The sender: the steps applied to its state.

function track(sender: Sender, promise: Promise<void>): void {
  sender.work.add(promise);
  promise
    .catch((error: unknown) => sender.services.log.error(failureFields(error), 'webhook outbox: unexpected failure'))
    .finally(() => sender.work.delete(promise));
}

function wake(sender: Sender): void {
  sender.wakeUp.abort();
}

/** Gives back deliveries not sent; their lease ends anyway if that fails. */
function giveBack(sender: Sender, entry: Held, items: Queued[]): void {
  if (items.length === 0) return;
  track(sender, releaseDeliveries(sender.services.db, items.map((q) => ({ id: q.delivery.id, leaseToken: q.leaseToken })))
    .catch((error: unknown) => sender.services.log.warn(failureFields(error), 'webhook outbox: claimed deliveries not given back; their lease ends'))
    .finally(() => settle(sender, entry, items.length)));
}

/** `count` deliveries of a webhook are done with (recorded or given back); when none is left, it is claimed for again. */
function settle(sender: Sender, entry: Held, count: number): void {
  entry.outstanding -= count;
  if (entry.outstanding === 0 && sender.held.get(entry.webhook.id) === entry) {
    sender.held.delete(entry.webhook.id);
    wake(sender);
  }
}

/** Starts attempts from the batches while there is room, and gives back what may no longer start. */
function pump(sender: Sender): void {
  if (sender.stopping) return;
  const plan = startable(sender.held.values(), sender.settings.perProcess - sender.sending, performance.now());
  for (const { entry, items } of plan.giveBack) giveBack(sender, entry, items);
  for (const { entry, item } of plan.start) attempt(sender, entry, item);
}

function attempt(sender: Sender, entry: Held, item: Queued): void {
  entry.sending++;
  sender.sending++;
  const transport = { rules: sender.rules, agents: sender.agents, retrySchedule: sender.services.config.webhooks.retrySchedule };
  track(sender, sendAttempt(entry.webhook, item, transport).then((finished) => {
    entry.sending--;
    sender.sending--;
    sender.pace.set(finished.claim.webhookId, nextPace(sender.pace.get(finished.claim.webhookId), finished.result.durationMs));
    addFinished(sender.finished, finished);
    recordFinished(sender);
    pump(sender);
  }));
}

/** Records the finished attempts, all that are there in one go, now or within RECORD_DELAY_MS (recordWhen). */
function recordFinished(sender: Sender, now = false): void {
  if (sender.recording || sender.finished.records.length === 0) return;
  if (!now && recordWhen(sender.finished, sender.held, sender.stopping) === 'later') {
    sender.recordTimer ??= setTimeout(() => {
      sender.recordTimer = undefined;
      recordFinished(sender, true);
    }, RECORD_DELAY_MS);
    return;
  }
  clearTimeout(sender.recordTimer);
  sender.recordTimer = undefined;
  const records = sender.finished.records;
  sender.finished = noneFinished();
  const judged: Recorded = new Map();
  sender.recording = (async () => {
    try {
      await record(sender.services, records, judged);
    } catch (error) {
      for (const r of records) sender.services.log.error({ ...failureFields(error), deliveryId: r.claim.id }, 'webhook delivery not recorded');
    }
    // A changed URL or a rotated secret applies to the rest of the batch; a webhook no longer active gets no more of it.
    for (const [webhookId, now] of judged) {
      const entry = sender.held.get(webhookId);
      if (!entry) continue;
      entry.webhook = now;
      if (!now.active) giveBack(sender, entry, entry.queue.splice(0));
    }
    for (const r of records) {
      const entry = sender.held.get(r.claim.webhookId);
      if (entry) settle(sender, entry, 1);
    }
  })().finally(() => {
    sender.recording = undefined;
    recordFinished(sender);
  });
  track(sender, sender.recording);
}

/** One round: new events numbered (with their deliveries), deliveries claimed. True when a backlog is left (a full page or batch). */
async function round(sender: Sender): Promise<boolean> {
  const { services, settings, held } = sender;
  const work = await outboxWork(services.db);
  const numbered = work.events ? await dispatchEvents(services) : 0;
  if (sender.stopping || held.size >= settings.perProcess) return numbered >= EVENT_PAGE;
  // Numbering may have queued deliveries the look could not see.
  if (!work.deliveries && numbered === 0) return false;
  const claimed = await claim(services.db, {
    room: settings.perProcess - held.size,
    except: [...held.keys()],
    pace: sender.pace,
    leaseMs: settings.leaseMs,
    claimedAt: performance.now(),
  });
  const full = claimed.some((entry) => entry.queue.length >= MAX_BATCH);
  for (const entry of claimed) held.set(entry.webhook.id, entry);
  pump(sender);
  return numbered >= EVENT_PAGE || full;
}

/** Runs rounds until the sender stops: at once while a backlog is left, else after the poll or a wake, at most one a roundMs. */
async function run(sender: Sender): Promise<void> {
  while (!sender.stopping) {
    const startedAt = performance.now();
    let backlog = false;
    try {
      backlog = await round(sender);
    } catch (error) {
      sender.services.log.warn(failureFields(error), 'webhook outbox: the database did not answer; trying again');
    }
    sender.onRound?.();
    if (sender.stopping) break;
    if (backlog) continue;
    await sleep(sender.settings.pollMs, undefined, { signal: sender.wakeUp.signal }).catch(() => undefined);
    if (sender.wakeUp.signal.aborted) sender.wakeUp = new AbortController();
    // Woken early (a batch done, events waiting for their number): the next round waits out the rest of roundMs.
    const rest = startedAt + sender.settings.roundMs - performance.now();
    if (rest > 0 && !sender.stopping) await sleep(rest, undefined, { signal: sender.stopped.signal }).catch(() => undefined);
  }
}

export function startOutbox(services: OutboxServices, options: OutboxOptions = {}): Outbox {
  const rules = addressRules(services.config.webhooks.allowNetworks);
  const pollMs = options.pollMs ?? 250;
  const sender: Sender = {
    services,
    settings: {
      pollMs,
      roundMs: Math.min(pollMs, options.roundMs ?? ROUND_MS),
      leaseMs: options.leaseMs ?? LEASE_MS,
      perProcess: options.perProcess ?? PER_PROCESS,
    },
    rules,
    agents: keepAliveAgents(rules),
    held: new Map(),
    pace: new Map(),
    finished: noneFinished(),
    sending: 0,
    recording: undefined,
    recordTimer: undefined,
    stopping: false,
    wakeUp: new AbortController(),
    stopped: new AbortController(),
    work: new Set(),
    onRound: options.onRound,
  };
  const loop = run(sender);
  return {
    wake: () => wake(sender),
    async stop() {
      sender.stopping = true;
      wake(sender);
      sender.stopped.abort();
      await loop;
      // What waits in a batch is given back at once rather than when its lease ends.
      for (const entry of sender.held.values()) giveBack(sender, entry, entry.queue.splice(0));
      recordFinished(sender, true);
      while (sender.work.size > 0 || sender.recordTimer) {
        await Promise.allSettled([...sender.work]);
        recordFinished(sender, true);
      }
      sender.agents.destroy();
    },
  };
}
