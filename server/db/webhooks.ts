// The webhooks table and its deliveries: the durable outbox (docs/webhooks.md, "Delivery").
//
// Written here rather than taken from a queue library: pg-boss and graphile-worker need Node 22 and
// PostgreSQL only, and we run on Node 20 and on MariaDB/MySQL too. The outbox is small: a delivery
// row per event and webhook, claimed with FOR UPDATE SKIP LOCKED and a lease on database time, so
// any process may send it, one at a time, and a dead sender's claim is taken over when its lease ends.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import { type Db, dialectOf } from './dialects/index.js';
import { retryConflicts } from './faults.js';
import { affectedCount, toDate, toNumber } from './rows.js';

export interface StoredWebhook {
  id: string;
  url: string;
  events: string[];
  projects: string[] | null;
  description: string | null;
  active: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  failuresInRow: number;
  lastSuccessAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

const WEBHOOK_COLUMNS = [
  'id', 'url', 'events', 'projects', 'description', 'active', 'secret', 'previous_secret', 'previous_secret_until',
  'failures_in_row', 'last_success_at', 'disabled_reason', 'created_at',
];

const dateOrNull = (value: unknown) => (value === null || value === undefined ? null : toDate(value));

function webhookFromRow(row: Record<string, unknown>): StoredWebhook {
  return {
    id: String(row.id),
    url: String(row.url),
    events: JSON.parse(String(row.events)) as string[],
    projects: row.projects === null ? null : (JSON.parse(String(row.projects)) as string[]),
    description: (row.description as string | null) ?? null,
    active: Boolean(row.active),
    secret: String(row.secret),
    previousSecret: (row.previous_secret as string | null) ?? null,
    previousSecretUntil: dateOrNull(row.previous_secret_until),
    failuresInRow: toNumber(row.failures_in_row),
    lastSuccessAt: dateOrNull(row.last_success_at),
    disabledReason: (row.disabled_reason as string | null) ?? null,
    createdAt: toDate(row.created_at),
  };
}

export interface WebhookFields {
  url: string;
  events: string[];
  projects: string[] | null;
  description: string | null;
  active: boolean;
}

export async function insertWebhook(db: Db, fields: WebhookFields, secret: string): Promise<StoredWebhook> {
  const id = randomUUID();
  await db('webhooks').insert({
    id,
    url: fields.url,
    events: JSON.stringify(fields.events),
    projects: fields.projects && JSON.stringify(fields.projects),
    description: fields.description,
    active: fields.active,
    secret,
  });
  return findWebhook(db, id);
}

export async function findWebhook(db: Db, id: string): Promise<StoredWebhook> {
  const row = await db('webhooks').select(WEBHOOK_COLUMNS).where({ id }).first();
  if (!row) throw new AppError('not_found', `no webhook with id ${id}`);
  return webhookFromRow(row);
}

export async function listWebhooks(db: Db, options: { activeOnly?: boolean } = {}): Promise<StoredWebhook[]> {
  const query = db('webhooks').select(WEBHOOK_COLUMNS).orderBy('created_at').orderBy('id');
  if (options.activeOnly) query.where('active', true);
  return (await query).map(webhookFromRow);
}

export async function updateWebhook(db: Db, id: string, fields: Partial<WebhookFields>): Promise<StoredWebhook> {
  const changes: Record<string, unknown> = { updated_at: db.fn.now(3) };
  if (fields.url !== undefined) changes.url = fields.url;
  if (fields.events !== undefined) changes.events = JSON.stringify(fields.events);
  if (fields.projects !== undefined) changes.projects = fields.projects && JSON.stringify(fields.projects);
  if (fields.description !== undefined) changes.description = fields.description;
  if (fields.active !== undefined) {
    changes.active = fields.active;
    // Enabled again: a fresh start for the failure count.
    if (fields.active) Object.assign(changes, { disabled_reason: null, failures_in_row: 0 });
  }
  if (affectedCount(await db('webhooks').where({ id }).update(changes)) === 0) throw new AppError('not_found', `no webhook with id ${id}`);
  return findWebhook(db, id);
}

export async function deleteWebhook(db: Db, id: string): Promise<void> {
  if (affectedCount(await db('webhooks').where({ id }).delete()) === 0) throw new AppError('not_found', `no webhook with id ${id}`);
}

/** A new secret signs from now on; the current one keeps signing beside it until `overlapUntil`. */
export async function rotateWebhookSecret(db: Db, id: string, secret: string, overlapUntil: Date): Promise<void> {
  const current = await findWebhook(db, id);
  await db('webhooks')
    .where({ id })
    .update({ secret, previous_secret: current.secret, previous_secret_until: overlapUntil, updated_at: db.fn.now(3) });
}

/** Disables a webhook and says why; false when it was already disabled. */
export async function disableWebhook(db: Db, id: string, reason: string): Promise<boolean> {
  const changed = await db('webhooks').where({ id, active: true }).update({ active: false, disabled_reason: reason.slice(0, 500), updated_at: db.fn.now(3) });
  return affectedCount(changed) > 0;
}

/**
 * Locks a webhook row against other claims and records, but not against queuing its deliveries:
 * on PostgreSQL FOR UPDATE would also wait for (or skip past) every insert whose foreign key shares
 * the row, so a sender would find nothing to claim while events are being queued.
 */
function lockWebhook(query: Knex.QueryBuilder): void {
  if (query.client.dialect === 'mysql') query.forUpdate();
  else query.forNoKeyUpdate();
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface StoredDelivery {
  id: string;
  webhookId: string;
  eventId: number | null;
  type: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  durationMs: number | null;
}

const DELIVERY_COLUMNS = [
  'id', 'webhook_id', 'event_id', 'type', 'body', 'status', 'attempts', 'last_status', 'last_error',
  'last_attempt_at', 'next_attempt_at', 'duration_ms',
];

function deliveryFromRow(row: Record<string, unknown>): StoredDelivery {
  return {
    id: String(row.id),
    webhookId: String(row.webhook_id),
    eventId: row.event_id === null ? null : toNumber(row.event_id),
    type: String(row.type),
    body: String(row.body),
    status: String(row.status) as DeliveryStatus,
    attempts: toNumber(row.attempts),
    lastStatus: row.last_status === null ? null : toNumber(row.last_status),
    lastError: (row.last_error as string | null) ?? null,
    lastAttemptAt: dateOrNull(row.last_attempt_at),
    nextAttemptAt: dateOrNull(row.next_attempt_at),
    durationMs: row.duration_ms === null ? null : toNumber(row.duration_ms),
  };
}

export interface NewDelivery {
  webhookId: string;
  eventId: number | null;
  eventSeq: number | null;
  type: string;
  body: string;
}

/** Queues deliveries, due now. */
export async function insertDeliveries(db: Db, deliveries: NewDelivery[]): Promise<string[]> {
  if (deliveries.length === 0) return [];
  const rows = deliveries.map((d) => ({
    id: randomUUID(),
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_seq: d.eventSeq,
    type: d.type,
    body: d.body,
    status: 'pending',
    next_attempt_at: db.fn.now(3),
  }));
  for (let i = 0; i < rows.length; i += 200) await db('deliveries').insert(rows.slice(i, i + 200));
  return rows.map((r) => r.id);
}

/** A delivery held by one sender until `lease_until` (database time). */
export interface ClaimedDelivery extends StoredDelivery {
  leaseToken: string;
  url: string;
  secrets: string[];
}

/**
 * Claims due deliveries for one sender, at most `limit` in all and never more than `perWebhook`
 * in flight per webhook across every sender (the webhook rows are locked while counting, so two
 * senders do not both see a free slot). A webhook's deliveries go in commit order (event_seq).
 */
export async function claimDeliveries(db: Db, options: { limit: number; perWebhook: number; leaseMs: number }): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  const dialect = dialectOf(db);
  return retryConflicts(() => db.transaction(async (trx) => {
    const now = trx.raw('current_timestamp(3)');
    const due = (query: ReturnType<typeof trx>) =>
      query.where('d.status', 'pending').where('d.next_attempt_at', '<=', now).where((q) => q.whereNull('d.lease_until').orWhere('d.lease_until', '<=', now));
    const webhooks = await trx('webhooks as w')
      .select('w.id', 'w.url', 'w.secret', 'w.previous_secret', 'w.previous_secret_until', trx.raw('previous_secret_until > current_timestamp(3) as overlapping'))
      .where('w.active', true)
      .whereExists((q) => due(q.select(trx.raw('1')).from('deliveries as d').whereRaw('d.webhook_id = w.id')))
      .orderBy('w.id')
      .limit(options.limit)
      .modify(lockWebhook)
      .skipLocked();
    const claimed: ClaimedDelivery[] = [];
    for (const webhook of webhooks) {
      const room = Math.min(options.perWebhook, options.limit - claimed.length);
      if (room <= 0) break;
      const [busy] = await trx('deliveries').count({ n: '*' }).where({ webhook_id: webhook.id, status: 'pending' }).where('lease_until', '>', now);
      const slots = room - toNumber(busy?.n);
      if (slots <= 0) continue;
      const rows = await due(trx('deliveries as d').select(DELIVERY_COLUMNS.map((c) => `d.${c}`)).where('d.webhook_id', webhook.id))
        .orderBy('d.event_seq')
        .orderBy('d.created_at')
        .limit(slots)
        .forUpdate()
        .skipLocked();
      if (rows.length === 0) continue;
      const leaseToken = randomUUID();
      await trx('deliveries')
        .whereIn('id', rows.map((r: Record<string, unknown>) => r.id as string))
        .update({ lease_until: dialect.nowPlus(trx, options.leaseMs), lease_token: leaseToken });
      const secrets = [String(webhook.secret)];
      if (webhook.previous_secret && Boolean(webhook.overlapping)) secrets.push(String(webhook.previous_secret));
      for (const row of rows) claimed.push({ ...deliveryFromRow(row), leaseToken, url: String(webhook.url), secrets });
    }
    return claimed;
  }));
}

export interface AttemptResult {
  status?: number;
  error?: string;
  durationMs: number;
}

/**
 * Records an attempt of a claimed delivery: delivered, retried after `retryInMs`, or failed when
 * `retryInMs` is undefined. Counts the webhook's failures in a row (a success resets them). False
 * when the lease was lost meanwhile (another sender took it over): nothing is recorded.
 */
export async function recordAttempt(db: Db, claim: { id: string; webhookId: string; leaseToken: string }, result: AttemptResult, retryInMs: number | undefined): Promise<boolean> {
  const delivered = result.error === undefined;
  // The webhook row first, as claimDeliveries locks it: the same order, so the two never deadlock.
  return retryConflicts(() => db.transaction(async (trx) => {
    await trx('webhooks').select('id').where({ id: claim.webhookId }).modify(lockWebhook);
    const changed = await trx('deliveries')
      .where({ id: claim.id, lease_token: claim.leaseToken })
      .update({
        status: delivered ? 'delivered' : retryInMs === undefined ? 'failed' : 'pending',
        attempts: trx.raw('attempts + 1'),
        last_status: result.status ?? null,
        last_error: result.error?.slice(0, 500) ?? null,
        last_attempt_at: trx.fn.now(3),
        next_attempt_at: !delivered && retryInMs !== undefined ? dialectOf(trx).nowPlus(trx, retryInMs) : null,
        duration_ms: result.durationMs,
        lease_until: null,
        lease_token: null,
        updated_at: trx.fn.now(3),
      });
    if (affectedCount(changed) === 0) return false;
    await trx('webhooks')
      .where({ id: claim.webhookId })
      .update(delivered ? { failures_in_row: 0, last_success_at: trx.fn.now(3) } : { failures_in_row: trx.raw('failures_in_row + 1') });
    return true;
  }));
}

/** A webhook whose deliveries failed `failures` times in a row with no success for `days`: to disable. */
export async function isFailingLong(db: Db, id: string, failures: number, days: number, now: Date): Promise<boolean> {
  const row = await db('webhooks')
    .select('id')
    .where({ id, active: true })
    .where('failures_in_row', '>=', failures)
    .where(db.raw('coalesce(last_success_at, created_at)'), '<', new Date(now.getTime() - days * 86_400_000))
    .first();
  return Boolean(row);
}

/** Records a ping: sent at once, never retried. */
export async function insertSentDelivery(db: Db, id: string, webhookId: string, type: string, body: string, result: AttemptResult): Promise<void> {
  await db('deliveries').insert({
    id,
    webhook_id: webhookId,
    type,
    body,
    status: result.error === undefined ? 'delivered' : 'failed',
    attempts: 1,
    last_status: result.status ?? null,
    last_error: result.error?.slice(0, 500) ?? null,
    last_attempt_at: db.fn.now(3),
    duration_ms: result.durationMs,
  });
}

export async function listDeliveries(
  db: Db,
  webhookId: string,
  filter: { status?: DeliveryStatus; page: number; size: number },
): Promise<{ items: StoredDelivery[]; total: number }> {
  const where = (q: ReturnType<typeof db>) => {
    q.where('webhook_id', webhookId);
    if (filter.status) q.where('status', filter.status);
    return q;
  };
  const [rows, [count]] = await Promise.all([
    where(db('deliveries').select(DELIVERY_COLUMNS))
      .orderBy('created_at', 'desc')
      .orderBy('event_seq', 'desc')
      .limit(filter.size)
      .offset((filter.page - 1) * filter.size),
    where(db('deliveries').count({ n: '*' })),
  ]);
  return { items: rows.map(deliveryFromRow), total: toNumber(count?.n) };
}

/** Queues a delivery again, due now, with the same id (the receiver's webhook-id) and body. */
export async function redeliver(db: Db, webhookId: string, deliveryId: string): Promise<void> {
  const changed = await db('deliveries')
    .where({ id: deliveryId, webhook_id: webhookId })
    .update({ status: 'pending', attempts: 0, next_attempt_at: db.fn.now(3), lease_until: null, lease_token: null, updated_at: db.fn.now(3) });
  if (affectedCount(changed) === 0) throw new AppError('not_found', `no delivery ${deliveryId} of webhook ${webhookId}`);
}

/** Deletes finished deliveries older than `days`. Scheduled work: (db, now). */
export async function expireDeliveries(db: Db, now: Date, days = 30): Promise<number> {
  return affectedCount(await db('deliveries')
    .whereIn('status', ['delivered', 'failed'])
    .where('updated_at', '<', new Date(now.getTime() - days * 86_400_000))
    .delete());
}
