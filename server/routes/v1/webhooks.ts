// Webhooks: create, list, change, remove, rotate the secret, ping, deliveries and redelivery.
import {
  DeliveriesQuery,
  DeliveryIdParams,
  DeliveryList,
  PingResult,
  SecretRotated,
  Webhook,
  WebhookCreateRequest,
  WebhookCreated,
  WebhookIdParams,
  WebhookList,
  WebhookUpdateRequest,
} from '../../../common/schemas/webhooks.js';
import { endpoint } from '../../http/endpoint.js';
import {
  changeWebhook,
  createWebhook,
  deliveries,
  ping,
  redeliver,
  removeWebhook,
  rotateSecret,
  webhook,
  webhooks,
} from '../../services/webhooks.js';

const ADMIN = { role: 'ROLE_ADMIN', purpose: 'manage webhooks' } as const;
const missing = { 404: { description: 'No such webhook' } };

export const webhookEndpoints = [
  endpoint({
    method: 'POST',
    path: '/v1/webhooks',
    summary: 'Add a webhook (its secret is shown once)',
    tags: ['webhooks'],
    access: ADMIN,
    body: WebhookCreateRequest,
    responses: { 201: { description: 'Added', schema: WebhookCreated }, 400: { description: 'Invalid, or an address webhooks may not reach' } },
    audit: { action: 'webhook.created' },
    handler: async (req, services) => {
      const created = await createWebhook(services, req.body);
      return { status: 201, body: created, audit: { target: created.id, details: { url: created.url } } };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/webhooks',
    summary: 'The webhooks (never their secrets)',
    tags: ['webhooks'],
    access: ADMIN,
    responses: { 200: { description: 'The webhooks', schema: WebhookList } },
    handler: async (_req, services) => ({ body: await webhooks(services) }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/webhooks/{id}',
    summary: 'One webhook',
    tags: ['webhooks'],
    access: ADMIN,
    params: WebhookIdParams,
    responses: { 200: { description: 'The webhook', schema: Webhook }, ...missing },
    handler: async (req, services) => ({ body: await webhook(services, req.params.id) }),
  }),
  endpoint({
    method: 'PATCH',
    path: '/v1/webhooks/{id}',
    summary: 'Change a webhook (active: true enables it again)',
    tags: ['webhooks'],
    access: ADMIN,
    params: WebhookIdParams,
    body: WebhookUpdateRequest,
    responses: { 200: { description: 'Changed', schema: Webhook }, 400: { description: 'Invalid' }, ...missing },
    audit: { action: 'webhook.changed', target: (req) => req.params.id },
    handler: async (req, services) => ({ body: await changeWebhook(services, req.params.id, req.body), audit: { details: { changed: req.body } } }),
  }),
  endpoint({
    method: 'DELETE',
    path: '/v1/webhooks/{id}',
    summary: 'Remove a webhook and its deliveries',
    tags: ['webhooks'],
    access: ADMIN,
    params: WebhookIdParams,
    responses: { 204: { description: 'Removed' }, ...missing },
    audit: { action: 'webhook.deleted', target: (req) => req.params.id },
    handler: async (req, services) => {
      const removed = await removeWebhook(services, req.params.id);
      return { status: 204, audit: { details: { url: removed.url } } };
    },
  }),
  endpoint({
    method: 'POST',
    path: '/v1/webhooks/{id}/rotate-secret',
    summary: 'A new secret; the previous one keeps signing beside it for 24 h',
    tags: ['webhooks'],
    access: ADMIN,
    params: WebhookIdParams,
    responses: { 200: { description: 'The new secret, shown once', schema: SecretRotated }, ...missing },
    audit: { action: 'webhook.changed', target: (req) => req.params.id },
    handler: async (req, services) => {
      const rotated = await rotateSecret(services, req.params.id);
      // Named so that the audit's filter of secret-looking keys keeps them.
      return { body: rotated, audit: { details: { rotated: 'secret', previousValidUntil: rotated.previousValidUntil } } };
    },
  }),
  endpoint({
    method: 'POST',
    path: '/v1/webhooks/{id}/ping',
    summary: 'Deliver a ping now',
    tags: ['webhooks'],
    access: ADMIN,
    params: WebhookIdParams,
    responses: { 200: { description: 'What the receiver answered', schema: PingResult }, ...missing },
    handler: async (req, services) => ({ body: await ping(services, req.params.id) }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/webhooks/{id}/deliveries',
    summary: "A webhook's deliveries, newest first",
    tags: ['webhooks'],
    access: ADMIN,
    params: WebhookIdParams,
    query: DeliveriesQuery,
    responses: { 200: { description: 'A page of deliveries', schema: DeliveryList }, 400: { description: 'Invalid filter' }, ...missing },
    handler: async (req, services) => ({ body: await deliveries(services, req.params.id, req.query) }),
  }),
  endpoint({
    method: 'POST',
    path: '/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver',
    summary: 'Send a delivery again, with the same webhook-id',
    tags: ['webhooks'],
    access: ADMIN,
    params: DeliveryIdParams,
    responses: { 202: { description: 'Queued' }, 404: { description: 'No such webhook or delivery' } },
    audit: { action: 'webhook.changed', target: (req) => req.params.id },
    handler: async (req, services) => {
      await redeliver(services, req.params.id, req.params.deliveryId);
      return { status: 202, audit: { details: { redelivered: req.params.deliveryId } } };
    },
  }),
];
