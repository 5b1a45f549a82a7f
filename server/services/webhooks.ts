// Webhooks: creating and changing them, their secrets, a ping, their deliveries (docs/webhooks.md).
import { pageInfo } from '../../common/schemas/common.js';
import { randomUUID } from 'node:crypto';
import { AppError } from '../../common/errors.js';
import { EVENT_TYPES } from '../../common/schemas/events.js';
import type {
  Delivery,
  DeliveriesQuery,
  PingResult,
  SecretRotated,
  Webhook,
  WebhookCreateRequest,
  WebhookCreated,
  WebhookUpdateRequest,
} from '../../common/schemas/webhooks.js';
import {
  type StoredDelivery,
  type StoredWebhook,
  deleteWebhook,
  findWebhook,
  insertSentDelivery,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  redeliver as queueAgain,
  rotateWebhookSecret,
  updateWebhook,
} from '../db/webhooks.js';
import { addressRules, urlRefusal } from '../webhooks/addresses.js';
import { send } from '../webhooks/send.js';
import { newSecret } from '../webhooks/signature.js';
import type { Services } from './context.js';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

function toWebhook(stored: StoredWebhook): Webhook {
  return {
    id: stored.id,
    url: stored.url,
    events: stored.events,
    projects: stored.projects,
    description: stored.description,
    active: stored.active,
    disabledReason: stored.disabledReason,
    failuresInRow: stored.failuresInRow,
    lastSuccessAt: stored.lastSuccessAt?.toISOString() ?? null,
    createdAt: stored.createdAt.toISOString(),
  };
}

function toDelivery(stored: StoredDelivery): Delivery {
  return {
    id: stored.id,
    eventId: stored.eventId === null ? null : String(stored.eventId),
    type: stored.type,
    status: stored.status,
    attempts: stored.attempts,
    lastStatus: stored.lastStatus,
    lastError: stored.lastError,
    lastAttemptAt: stored.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: stored.status === 'pending' ? (stored.nextAttemptAt?.toISOString() ?? null) : null,
    durationMs: stored.durationMs,
  };
}

/** A URL that every delivery would refuse is refused at once (a name is checked again at each send). */
async function checkAddress(services: Services, url: string): Promise<void> {
  const refused = await urlRefusal(addressRules(services.config.webhooks.allowNetworks), new URL(url));
  if (refused) throw new AppError('validation', `url: ${refused}`);
}

export async function createWebhook(services: Services, request: WebhookCreateRequest): Promise<WebhookCreated> {
  await checkAddress(services, request.url);
  const secret = newSecret();
  const stored = await insertWebhook(
    services.db,
    {
      url: request.url,
      events: request.events ?? [...EVENT_TYPES],
      projects: request.projects ?? null,
      description: request.description ?? null,
      active: request.active ?? true,
    },
    secret,
  );
  return { ...toWebhook(stored), secret };
}

export async function webhooks(services: Services): Promise<{ webhooks: Webhook[] }> {
  return { webhooks: (await listWebhooks(services.db)).map(toWebhook) };
}

export async function webhook(services: Services, id: string): Promise<Webhook> {
  return toWebhook(await findWebhook(services.db, id));
}

export async function changeWebhook(services: Services, id: string, request: WebhookUpdateRequest): Promise<Webhook> {
  if (request.url !== undefined) await checkAddress(services, request.url);
  return toWebhook(await updateWebhook(services.db, id, request));
}

/** Removes a webhook; what it was. */
export async function removeWebhook(services: Services, id: string): Promise<Webhook> {
  return toWebhook(await deleteWebhook(services.db, id));
}

export async function rotateSecret(services: Services, id: string): Promise<SecretRotated> {
  const secret = newSecret();
  const until = new Date(services.now().getTime() + ROTATION_OVERLAP_MS);
  await rotateWebhookSecret(services.db, id, secret, until);
  return { secret, previousValidUntil: until.toISOString() };
}

/** Sends a `ping` now, signed like any delivery, and records it in the webhook's deliveries. */
export async function ping(services: Services, id: string): Promise<PingResult> {
  const stored = await findWebhook(services.db, id);
  const secrets = [stored.secret];
  if (stored.previousSecret && stored.previousSecretUntil && stored.previousSecretUntil > services.now()) secrets.push(stored.previousSecret);
  const body = JSON.stringify({ type: 'ping', timestamp: services.now().toISOString(), data: { webhookId: id } });
  const deliveryId = randomUUID();
  const attempt = await send({ url: stored.url, id: deliveryId, body, secrets }, addressRules(services.config.webhooks.allowNetworks));
  await insertSentDelivery(services.db, deliveryId, id, 'ping', body, attempt);
  return { delivered: attempt.error === undefined, status: attempt.status ?? null, durationMs: attempt.durationMs, error: attempt.error ?? null };
}

export async function deliveries(services: Services, id: string, query: DeliveriesQuery) {
  await findWebhook(services.db, id);
  const { items, total } = await listDeliveries(services.db, id, query);
  return {
    deliveries: items.map(toDelivery),
    page: pageInfo(total, query, items.length),
  };
}

export async function redeliver(services: Services, id: string, deliveryId: string): Promise<void> {
  await queueAgain(services.db, id, deliveryId);
}
