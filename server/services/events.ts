// Events as the API and webhooks show them, their numbering into commit order with the deliveries
// it queues (the outbox's work), and the feed, which only reads (docs/webhooks.md).
import { setTimeout as sleep } from 'node:timers/promises';
import { type StoredEvent, eventsWithData, lastSeq, lastUnnumbered, readEvents, sequenceEvents } from '../db/events.js';
import { fromRow } from '../db/versions.js';
import { type NewDelivery, type StoredWebhook, insertDeliveries, listWebhooks } from '../db/webhooks.js';
import type { EventPage, EventsQuery } from '../../common/schemas/events.js';
import type { Services } from './context.js';
import { toVersionInformation } from './versions.js';

export interface ApiEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** An event's data as published: a versions row becomes the record as the API answers with it. */
function shapeData(event: StoredEvent): Record<string, unknown> {
  const { record, ...rest } = event.data as { record?: Record<string, unknown> };
  return record ? { ...toVersionInformation(fromRow(record)), ...rest } : rest;
}

export function toApiEvent(event: StoredEvent): ApiEvent {
  return { id: String(event.id), type: event.type, timestamp: event.createdAt.toISOString(), data: shapeData(event) };
}

/** The body a webhook receives for an event. */
export function deliveryBody(event: ApiEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

/** The most events one dispatchEvents numbers. */
export const EVENT_PAGE = 500;

/** Whether the webhook is sent the event. */
function wants(webhook: StoredWebhook, event: Pick<StoredEvent, 'type' | 'projectName'>): boolean {
  if (!webhook.active || !webhook.events.includes(event.type)) return false;
  return !webhook.projects || (event.projectName !== null && webhook.projects.includes(event.projectName));
}

/** The deliveries of these events: one per event and active webhook that wants it, in the events' order. */
export function deliveriesOf(events: StoredEvent[], webhooks: StoredWebhook[]): NewDelivery[] {
  const deliveries: NewDelivery[] = [];
  for (const event of events) {
    // Shaped once, and only for an event some webhook wants.
    let body: string | undefined;
    for (const webhook of webhooks) {
      if (!wants(webhook, event)) continue;
      body ??= deliveryBody(toApiEvent(event));
      deliveries.push({ webhookId: webhook.id, eventId: event.id, eventSeq: event.seq, type: event.type, body });
    }
  }
  return deliveries;
}

/**
 * Numbers newly committed events and, in the same transaction, queues their deliveries to every
 * active webhook that wants them: the outbox's first step (services/outbox.ts), never a reader's.
 * Any process may call it; one at a time does the work (`wait`: for its turn; else nothing is done
 * while another does it). The number of events numbered.
 */
export async function dispatchEvents(services: Pick<Services, 'db'>, options: { wait?: boolean } = {}): Promise<number> {
  return services.db.transaction(async (trx) => {
    const events = await sequenceEvents(trx, { limit: EVENT_PAGE, ...options });
    if (events.length === 0) return 0;
    const webhooks = await listWebhooks(trx, { activeOnly: true });
    // An event's data is read only when some webhook wants it (none, most of the time).
    const wanted = events.filter((event) => webhooks.some((webhook) => wants(webhook, event)));
    if (wanted.length > 0) await insertDeliveries(trx, deliveriesOf(await eventsWithData(trx, wanted), webhooks));
    return events.length;
  });
}

export interface FeedRequest {
  /** The cursor of a previous answer; absent: from the oldest event kept. */
  after?: string;
  limit: number;
  /** Seconds to wait for an event when none is there yet (long poll). */
  wait: number;
  types?: string[];
  /** Only this project's events (a project token's view). */
  projectName?: string;
  signal?: AbortSignal;
}

export interface FeedPage {
  events: ApiEvent[];
  next: string;
}

/** How often a waiting feed looks again. */
const FEED_POLL_MS = 200;
/** How often a feed looks whether the events it waits on have their number yet. */
const NUMBERED_POLL_MS = 20;
/**
 * The longest a feed waits for events committed before it asked to be numbered: a server whose
 * outbox has stopped answers with what is numbered, and the cursor reads the rest later.
 */
const NUMBERED_WAIT_MS = 5_000;

/** What the feed needs: the database, and the process's outbox to wake when events wait for their number. */
export type FeedServices = Pick<Services, 'db' | 'outbox'>;

/**
 * Waits until the events committed before this call have their number, which the outbox gives them
 * (this process's, woken now, or another's): the feed itself only reads.
 */
async function untilNumbered(services: FeedServices, signal?: AbortSignal): Promise<void> {
  const last = await lastUnnumbered(services.db);
  if (last === undefined) return;
  services.outbox?.wake();
  const until = Date.now() + NUMBERED_WAIT_MS;
  while (Date.now() < until && !signal?.aborted) {
    await sleep(NUMBERED_POLL_MS, undefined, { signal }).catch(() => undefined);
    if ((await lastUnnumbered(services.db, last)) === undefined) return;
  }
}

/**
 * Events after the cursor in commit order; with `wait`, holds until one arrives, the wait ends or
 * the client goes. Only reads: numbering events is the outbox's work.
 */
export async function feed(services: FeedServices, request: FeedRequest): Promise<FeedPage> {
  const after = request.after === undefined ? 0 : Number(request.after);
  const until = Date.now() + request.wait * 1000;
  for (;;) {
    // What was committed before this look is read: the outbox numbers it first.
    await untilNumbered(services, request.signal);
    const horizon = await lastSeq(services.db);
    const events = await readEvents(services.db, { after, limit: request.limit, projectName: request.projectName, types: request.types });
    if (events.length > 0) return { events: events.map(toApiEvent), next: String(events.at(-1)!.seq) };
    if (Date.now() >= until || request.signal?.aborted) {
      // With filters, skip past what was read and matched nothing, so the next call does not read it again.
      // (Everything up to `horizon` had its number before the read, so none is passed unread.)
      const next = request.types?.length || request.projectName !== undefined ? Math.max(after, horizon) : after;
      return { events: [], next: String(next) };
    }
    await sleep(Math.min(FEED_POLL_MS, Math.max(0, until - Date.now())), undefined, { signal: request.signal }).catch(() => undefined);
  }
}

/** The feed of `projectName`'s events (undefined: every project's), as the endpoint's access rule allowed. */
export function eventFeed(services: Services, projectName: string | undefined, query: EventsQuery, signal: AbortSignal): Promise<EventPage> {
  return feed(services, { after: query.after, limit: query.limit, wait: query.wait, types: query.type, projectName, signal });
}
