// Webhooks: signed deliveries of events to a URL (docs/webhooks.md).
import * as z from 'zod';
import { LooseBoolean, NO_NUL, NO_NUL_MESSAGE, PageInfo, Timestamp, Uuid, text } from './common.js';
import { EventType } from './events.js';

export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = 500;

const WebhookUrl = z
  .string()
  .max(WEBHOOK_URL_MAX, `at most ${WEBHOOK_URL_MAX} characters`)
  .regex(NO_NUL, NO_NUL_MESSAGE)
  .refine((s) => {
    try {
      const url = new URL(s);
      return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
    } catch {
      return false;
    }
  }, 'must be an http or https URL without user name or password')
  .meta({ example: 'https://ci.example.com/hooks/repoadmin' });

const webhookFields = {
  url: WebhookUrl,
  /** Default: every type. */
  events: z.array(EventType).min(1, 'name at least one event type').optional(),
  /** Only these projects' events; default: every project. */
  projects: z.array(text(100)).min(1).nullable().optional(),
  description: text(WEBHOOK_DESCRIPTION_MAX).nullable().optional(),
  active: LooseBoolean.optional(),
};

export const WebhookCreateRequest = z.object(webhookFields).meta({ id: 'WebhookCreateRequest' });
export type WebhookCreateRequest = z.output<typeof WebhookCreateRequest>;

export const WebhookUpdateRequest = z.object({ ...webhookFields, url: WebhookUrl.optional() }).meta({ id: 'WebhookUpdateRequest' });
export type WebhookUpdateRequest = z.output<typeof WebhookUpdateRequest>;

export const WebhookIdParams = z.object({ id: Uuid }).meta({ id: 'WebhookIdParams' });
export const DeliveryIdParams = z.object({ id: Uuid, deliveryId: Uuid }).meta({ id: 'DeliveryIdParams' });

export const Webhook = z
  .object({
    id: Uuid,
    url: z.string(),
    events: z.array(z.string()),
    projects: z.array(z.string()).nullable(),
    description: z.string().nullable(),
    active: z.boolean(),
    /** Why it was disabled by the server (410, too many failures); null otherwise. */
    disabledReason: z.string().nullable(),
    failuresInRow: z.number().int(),
    lastSuccessAt: Timestamp.nullable(),
    createdAt: Timestamp,
  })
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof Webhook>;

export const WebhookList = z.object({ webhooks: z.array(Webhook) }).meta({ id: 'WebhookList' });
export type WebhookList = z.infer<typeof WebhookList>;

/** `whsec_` and the base64 of 32 random bytes: shown only here, in a creation or a rotation. */
const Secret = z.string().meta({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });

export const WebhookCreated = Webhook.extend({ secret: Secret }).meta({ id: 'WebhookCreated' });
export type WebhookCreated = z.infer<typeof WebhookCreated>;

export const SecretRotated = z.object({ secret: Secret, previousValidUntil: Timestamp }).meta({ id: 'SecretRotated' });
export type SecretRotated = z.infer<typeof SecretRotated>;

export const PingResult = z
  .object({ delivered: z.boolean(), status: z.number().int().nullable(), durationMs: z.number().int(), error: z.string().nullable() })
  .meta({ id: 'PingResult' });
export type PingResult = z.infer<typeof PingResult>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export const DeliveriesQuery = z
  .object({
    status: z.enum(DELIVERY_STATUSES).optional(),
    page: z.coerce.number().int().min(1).default(1),
    size: z.coerce.number().int().min(1).max(1000).default(20),
  })
  .meta({ id: 'DeliveriesQuery' });
export type DeliveriesQuery = z.output<typeof DeliveriesQuery>;

export const Delivery = z
  .object({
    /** Also the webhook-id header: the same on every attempt and redelivery. */
    id: Uuid,
    eventId: z.string().nullable(),
    type: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    lastStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    lastAttemptAt: Timestamp.nullable(),
    nextAttemptAt: Timestamp.nullable(),
    durationMs: z.number().int().nullable(),
  })
  .meta({ id: 'Delivery' });
export type Delivery = z.infer<typeof Delivery>;

export const DeliveryList = z
  .object({
    deliveries: z.array(Delivery),
    page: PageInfo,
  })
  .meta({ id: 'DeliveryList' });
export type DeliveryList = z.infer<typeof DeliveryList>;
