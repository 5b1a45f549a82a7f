// The sender of the webhook outbox (server/db/webhooks.ts): numbers new events and queues their
// deliveries, claims due deliveries with a lease, sends them (at most 16 at once per process, 2 per
// webhook across all processes), and records each attempt with its retry or its end. Every process
// runs one; they share the work through the database. Publishing never waits for it.
import { setTimeout as sleep } from 'node:timers/promises';
import { writeAudit } from '../db/audit.js';
import {
  type ClaimedDelivery,
  claimDeliveries,
  disableWebhook,
  isFailingLong,
  recordAttempt,
} from '../db/webhooks.js';
import { type AddressRules, addressRules } from '../webhooks/addresses.js';
import { type Attempt, SEND_TIMEOUT_MS, send } from '../webhooks/send.js';
import type { Services } from './context.js';
import { dispatchEvents } from './events.js';
import { failureFields } from '../db/faults.js';

export const PER_PROCESS = 16;
export const PER_WEBHOOK = 2;
/** A claim outlives the longest attempt (10 s) with room to record it; then another sender may take it. */
export const LEASE_MS = SEND_TIMEOUT_MS + 20_000;
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

/** Disables a webhook, logs and audits it (not a request: the actor is the server). */
async function disable(services: OutboxServices, webhookId: string, reason: string): Promise<void> {
  if (!(await disableWebhook(services.db, webhookId, reason))) return;
  services.log.warn({ webhookId, reason }, 'webhook disabled');
  await writeAudit(services.db, { action: 'webhook.disabled', target: webhookId, outcome: 'ok', details: { reason } });
}

/** One attempt of a claimed delivery, recorded; the webhook disabled when the answer or the record says so. */
export async function deliver(services: OutboxServices, rules: AddressRules, claim: ClaimedDelivery): Promise<void> {
  const attempt = await send({ url: claim.url, id: claim.id, body: claim.body, secrets: claim.secrets }, rules);
  const retry = attempt.error === undefined ? undefined : retryIn(services.config.events.retrySchedule, claim.attempts, attempt);
  if (!(await recordAttempt(services.db, claim, attempt, retry))) return;
  if (attempt.status === 410) {
    await disable(services, claim.webhookId, 'the receiver answered 410 Gone');
  } else if (attempt.error !== undefined && (await isFailingLong(services.db, claim.webhookId, AUTO_DISABLE_FAILURES, AUTO_DISABLE_DAYS, services.now()))) {
    await disable(services, claim.webhookId, `${AUTO_DISABLE_FAILURES} failed deliveries in a row and no success for ${AUTO_DISABLE_DAYS} days`);
  }
}

export interface Outbox {
  /** Looks for work now rather than at the next poll (e.g. after a publish). */
  wake(): void;
  /** Stops claiming, waits for the attempts in flight. */
  stop(): Promise<void>;
}

export interface OutboxOptions {
  pollMs?: number;
  perProcess?: number;
}

export function startOutbox(services: OutboxServices, options: OutboxOptions = {}): Outbox {
  const rules = addressRules(services.config.events.allowNetworks);
  const pollMs = options.pollMs ?? 250;
  const perProcess = options.perProcess ?? PER_PROCESS;
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  let wakeUp = new AbortController();
  const wake = () => wakeUp.abort();

  const round = async (): Promise<void> => {
    await dispatchEvents(services);
    const claims = await claimDeliveries(services.db, { limit: perProcess - inFlight.size, perWebhook: PER_WEBHOOK, leaseMs: LEASE_MS });
    for (const claim of claims) {
      const sending: Promise<void> = deliver(services, rules, claim)
        .catch((error: unknown) => services.log.error({ ...failureFields(error), deliveryId: claim.id }, 'webhook delivery not recorded'))
        .finally(() => {
          inFlight.delete(sending);
          wake();
        });
      inFlight.add(sending);
    }
  };

  const loop = (async () => {
    while (!stopping) {
      try {
        await round();
      } catch (error) {
        services.log.warn(failureFields(error), 'webhook outbox: the database did not answer; trying again');
      }
      if (stopping) break;
      await sleep(pollMs, undefined, { signal: wakeUp.signal }).catch(() => undefined);
      if (wakeUp.signal.aborted) wakeUp = new AbortController();
    }
  })();

  return {
    wake,
    async stop() {
      stopping = true;
      wake();
      await loop;
      await Promise.allSettled([...inFlight]);
    },
  };
}
