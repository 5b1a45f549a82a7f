// Events: one per change, in commit order (docs/webhooks.md, "Events").
import * as z from 'zod';
import { Timestamp } from './common.js';

/** What a webhook may subscribe to and the feed may filter on; `ping` is sent only by a webhook's ping. */
export const EVENT_TYPES = ['version.published', 'latest.moved', 'version.deleted', 'version.restored', 'retention.finished', 'version.promoted', 'version.vetoed'] as const;
export const EventType = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventType>;

export const EVENTS_LIMIT_MAX = 1000;
export const EVENTS_WAIT_MAX_SECONDS = 60;

const whole = (name: string, min: number, max: number) =>
  z.coerce.number({ error: `${name} must be a whole number` }).int(`${name} must be a whole number`).min(min, `${name} must be ${min} or more`).max(max, `${name} must be at most ${max}`);

export const EventsQuery = z
  .object({
    /** The `next` of a previous answer; absent: from the oldest event kept. */
    after: z.string().regex(/^\d{1,18}$/, 'must be a cursor from a previous answer').optional(),
    limit: whole('limit', 1, EVENTS_LIMIT_MAX).default(100),
    /** Seconds to hold the request until an event arrives (long poll). */
    wait: whole('wait', 0, EVENTS_WAIT_MAX_SECONDS).default(0),
    /** Only these types (repeat the parameter, or separate with commas). */
    type: z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((t) => t.split(',')).filter(Boolean))
      .pipe(z.array(EventType))
      .optional(),
  })
  .meta({ id: 'EventsQuery' });
export type EventsQuery = z.output<typeof EventsQuery>;

export const Event = z
  .object({
    id: z.string(),
    type: z.string(),
    timestamp: Timestamp,
    /** version.*: the record (and `created`); latest.moved: the key, `from`, `to`, `seq`. */
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Event' });
export type Event = z.infer<typeof Event>;

export const EventPage = z
  .object({
    events: z.array(Event),
    /** Pass as `after` to read on. */
    next: z.string(),
  })
  .meta({ id: 'EventPage' });
export type EventPage = z.infer<typeof EventPage>;
