// Events as the API and webhooks show them, their numbering into commit order with the deliveries
// it queues, and the feed (docs/webhooks.md).
import { setTimeout as sleep } from 'node:timers/promises';
import { type StoredEvent, lastSeq, readEvents, sequenceEvents } from '../db/events.js';
import { fromRow } from '../db/versions.js';
import { type NewDelivery, insertDeliveries, listWebhooks } from '../db/webhooks.js';
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

/**
 * Numbers newly committed events and, in the same transaction, queues their deliveries to every
 * active webhook that wants them. Any process may call it; one at a time does the work (`wait`:
 * for its turn; else nothing is done while another does it). The number of events numbered.
 */
export async function dispatchEvents(services: Pick<Services, 'db'>, options: { wait?: boolean } = {}): Promise<number> {
  return services.db.transaction(async (trx) => {
    const events = await sequenceEvents(trx, { limit: EVENT_PAGE, ...options });
    if (events.length === 0) return 0;
    const webhooks = await listWebhooks(trx, { activeOnly: true });
    const deliveries: NewDelivery[] = [];
    for (const event of events) {
      // Shaped once, and only for an event some webhook wants (none, most of the time).
      let body: string | undefined;
      for (const webhook of webhooks) {
        if (!webhook.events.includes(event.type)) continue;
        if (webhook.projects && !(event.projectName !== null && webhook.projects.includes(event.projectName))) continue;
        body ??= deliveryBody(toApiEvent(event));
        deliveries.push({ webhookId: webhook.id, eventId: event.id, eventSeq: event.seq, type: event.type, body });
      }
    }
    await insertDeliveries(trx, deliveries);
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

/** Events after the cursor in commit order; with `wait`, holds until one arrives, the wait ends or the client goes. */
export async function feed(services: Pick<Services, 'db'>, request: FeedRequest): Promise<FeedPage> {
  const after = request.after === undefined ? 0 : Number(request.after);
  const until = Date.now() + request.wait * 1000;
  for (;;) {
    // Waiting for a sender that is numbering now: what was committed before this call is then read.
    await dispatchEvents(services, { wait: true });
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
