// The webhooks table and its deliveries: the durable outbox (docs/webhooks.md, "Delivery").
//
// Written here rather than taken from a queue library: pg-boss and graphile-worker need Node 22 and
// PostgreSQL only, and we run on Node 20 and on MariaDB/MySQL too. The outbox is small: a delivery
// row per event and webhook, claimed with FOR UPDATE SKIP LOCKED and a lease on database time, so
// any process may send it, one at a time, and a dead sender's claim is taken over when its lease ends.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import { type Db, type DeliveryOutcome, dialectOf } from './dialects/index.js';
import { retryConflicts } from './faults.js';
import { affectedCount, toDate, toNumber } from './rows.js';
import { cachedRows } from './statements.js';

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

/** Deletes a webhook; what it was. */
export async function deleteWebhook(db: Db, id: string): Promise<StoredWebhook> {
  const stored = await findWebhook(db, id);
  if (affectedCount(await db('webhooks').where({ id }).delete()) === 0) throw new AppError('not_found', `no webhook with id ${id}`);
  return stored;
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
  dialectOf(query as unknown as Db).lockRowsKeepingKeys(query);
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

/** What a sender needs of a webhook to send to it: where, and the secrets that sign (two while a rotation overlaps). */
export interface WebhookTarget {
  id: string;
  active: boolean;
  url: string;
  secrets: string[];
}

const TARGET_COLUMNS = (db: Db) => [
  'w.id', 'w.active', 'w.url', 'w.secret', 'w.previous_secret', db.raw('w.previous_secret_until > current_timestamp(3) as overlapping'),
];

function targetFromRow(row: Record<string, unknown>): WebhookTarget {
  const secrets = [String(row.secret)];
  if (row.previous_secret && Boolean(row.overlapping)) secrets.push(String(row.previous_secret));
  return { id: String(row.id), active: Boolean(row.active), url: String(row.url), secrets };
}

/**
 * What a sender reads of a claimed delivery: what its attempt sends and what its retry is timed by.
 * (Reading the whole row, its two dates parsed too, cost a claim of 256 about a seventh more CPU;
 * bench/outbox-statements.ts.)
 */
export interface ClaimedDelivery {
  id: string;
  body: string;
  /** Attempts before this one. */
  attempts: number;
}

const CLAIMED_COLUMNS = ['d.id', 'd.webhook_id', 'd.body', 'd.attempts', 'c.in_flight'];

/** Due deliveries of one webhook, held by one sender until `lease_until` (database time), in commit order. */
export interface ClaimedBatch {
  webhook: WebhookTarget;
  leaseToken: string;
  /** Requests this sender may have in flight for the webhook: `perWebhook` less those other senders hold. */
  inFlight: number;
  deliveries: ClaimedDelivery[];
}

export interface ClaimOptions {
  /** The most webhooks to claim for. */
  webhooks: number;
  /** The most requests in flight per webhook across all senders. */
  perWebhook: number;
  /** How many due deliveries to claim of a webhook, given the requests this sender may have in flight for it. */
  batch: (webhookId: string, inFlight: number) => number;
  leaseMs: number;
  /** Webhooks this sender still holds deliveries of: not claimed for again until those are recorded. */
  except?: string[];
}

/**
 * A delivery `d` a sender may claim (its one placeholder: the status `pending`): its attempt is due
 * and no lease holds it, on database time.
 */
const DUE = 'd.status = ? and d.next_attempt_at <= current_timestamp(3) and (d.lease_until is null or d.lease_until <= current_timestamp(3))';

/** What a sender's round has to do: events to number, deliveries of an active webhook due. */
export interface OutboxWork {
  events: boolean;
  deliveries: boolean;
}

/**
 * Whether a round has work, in one statement outside a transaction: an idle server (most of the
 * time, most servers) looks four times a second, and a round's own transactions, locks and query
 * building, run on every look, cost a server at rest 28 to 32 ms of CPU a second against about 11
 * with this look (docs/webhooks.md, "Delivery"). A row committed just after this look is found by
 * the next one, as it would be by the next round.
 */
export async function outboxWork(db: Db): Promise<OutboxWork> {
  const [row] = await cachedRows(db, 'outbox-work', [true, 'pending'], () =>
    [
      'select exists (select 1 from events where seq is null) as events,',
      `exists (select 1 from deliveries d join webhooks w on w.id = d.webhook_id where w.active = ? and ${DUE}) as deliveries`,
    ].join(' '),
  );
  return { events: Boolean(row?.events), deliveries: Boolean(row?.deliveries) };
}

/**
 * Claims due deliveries for one sender, a batch per webhook, for many webhooks at once. Every leased
 * delivery of a webhook counts against `perWebhook`, whether in flight or waiting in a sender's
 * batch, and a sender sends at most `inFlight` of a batch at once: so never more than `perWebhook`
 * requests are in flight per webhook across every sender. A webhook's deliveries go in commit order
 * (event_seq).
 *
 * Three statements, whatever the number of webhooks: the webhook rows are locked first (skipping
 * those another sender or record holds), so that two senders never both count a free slot of the
 * same webhook; then one statement counts each locked webhook's leased deliveries, ranks its due
 * ones and locks the first of them (FOR UPDATE SKIP LOCKED); one update leases them. The count runs
 * in a statement after the lock, so it sees every lease committed before the lock was taken.
 */
/**
 * Each statement of a claim sees what committed before it began: MariaDB's default, repeatable read,
 * would count leases with the snapshot of the first statement, taken before the webhooks' locks were held.
 */
const CLAIM_ISOLATION = 'read committed';

export async function claimDeliveries(db: Db, options: ClaimOptions): Promise<ClaimedBatch[]> {
  if (options.webhooks <= 0) return [];
  const dialect = dialectOf(db);
  return retryConflicts(() => db.transaction(async (trx) => {
    const query = trx('webhooks as w')
      .select(TARGET_COLUMNS(trx))
      .where('w.active', true)
      .whereExists((q) => q.select(trx.raw('1')).from('deliveries as d').whereRaw('d.webhook_id = w.id').whereRaw(DUE, ['pending']))
      .orderBy('w.id')
      .limit(options.webhooks)
      .modify(lockWebhook)
      .skipLocked();
    if (options.except?.length) query.whereNotIn('w.id', options.except);
    const webhooks: WebhookTarget[] = (await query).map((row: Record<string, unknown>) => targetFromRow(row));
    if (webhooks.length === 0) return [];
    const rows = await trx
      .from(dueInTurn(trx, webhooks.map((w) => w.id), options))
      .select(CLAIMED_COLUMNS)
      // The chosen ids first, then their rows by key: only those are read, so only those are locked.
      .joinRaw(`${dialect.joinInOrder} deliveries d on d.id = c.id`)
      .orderBy('d.webhook_id')
      .orderBy('c.place')
      .forUpdate('d')
      .skipLocked();
    if (rows.length === 0) return [];
    const leaseToken = randomUUID();
    await trx('deliveries')
      .whereIn('id', rows.map((r: Record<string, unknown>) => r.id as string))
      .update({ lease_until: dialect.nowPlus(trx, options.leaseMs), lease_token: leaseToken });
    return webhooks.flatMap((webhook) => {
      const mine = rows.filter((r: Record<string, unknown>) => String(r.webhook_id) === webhook.id);
      if (mine.length === 0) return [];
      const deliveries = mine.map((r: Record<string, unknown>) => ({ id: String(r.id), body: String(r.body), attempts: toNumber(r.attempts) }));
      return [{ webhook, leaseToken, inFlight: toNumber(mine[0].in_flight), deliveries }];
    });
  }, { isolationLevel: CLAIM_ISOLATION }));
}

/**
 * The due deliveries to claim of each of these webhooks, as a derived table `c` (id, in_flight,
 * place): the webhook's room (`perWebhook` less its leased deliveries, on database time) and, when
 * there is room, its due deliveries in commit order up to the batch for that room.
 */
function dueInTurn(db: Db, webhookIds: string[], options: ClaimOptions): Knex.Raw {
  const asWhole = (sql: string) => dialectOf(db).castWhole(sql);
  const rooms = Array.from({ length: options.perWebhook }, (_, i) => i + 1);
  // The batch for each webhook and each room it may have: the caller's rule, as values.
  const batch = `case room.webhook_id ${webhookIds.map(() => `when ? then case room.in_flight ${rooms.map(() => `when ? then ${asWhole('?')}`).join(' ')} end`).join(' ')} end`;
  const batchValues = webhookIds.flatMap((id) => [id, ...rooms.flatMap((room) => [room, Math.max(1, options.batch(id, room))])]);
  const sql = [
    '(select ranked.id, ranked.in_flight, ranked.place from (',
    `select d.id, room.in_flight, ${batch} as batch,`,
    'row_number() over (partition by d.webhook_id order by d.event_seq, d.created_at) as place',
    'from (',
    // Counted once per webhook (grouped: a subquery per row would count again for every delivery ranked).
    `select w.id as webhook_id, ${asWhole('?')} - count(b.id) as in_flight from webhooks w`,
    'left join deliveries b on b.webhook_id = w.id and b.status = ? and b.lease_until > current_timestamp(3)',
    `where w.id in (${webhookIds.map(() => '?').join(', ')}) group by w.id`,
    ') room join deliveries d on d.webhook_id = room.webhook_id',
    `where room.in_flight > 0 and ${DUE}`,
    ') ranked where ranked.place <= ranked.batch) as c',
  ].join(' ');
  return db.raw(sql, [...batchValues, options.perWebhook, 'pending', ...webhookIds, 'pending']);
}

/** Gives claimed deliveries back unsent (their lease ends now), so that any sender may take them. */
export async function releaseDeliveries(db: Db, claims: { id: string; leaseToken: string }[]): Promise<void> {
  const byToken = new Map<string, string[]>();
  for (const claim of claims) byToken.set(claim.leaseToken, [...(byToken.get(claim.leaseToken) ?? []), claim.id]);
  for (const [leaseToken, ids] of byToken) {
    await retryConflicts(() => db('deliveries').whereIn('id', ids).where({ lease_token: leaseToken, status: 'pending' }).update({ lease_until: null, lease_token: null }));
  }
}

export interface AttemptResult {
  status?: number;
  error?: string;
  durationMs: number;
}

/** An attempt of a claimed delivery to record: delivered, retried after `retryInMs`, or failed when `retryInMs` is undefined. */
export interface AttemptRecord {
  claim: { id: string; webhookId: string; leaseToken: string };
  result: AttemptResult;
  retryInMs: number | undefined;
}

export interface RecordedAttempts {
  /** The deliveries whose attempt was recorded; the others' lease was lost meanwhile (another sender took it over). */
  recorded: Set<string>;
  /** Each webhook of the attempts as it is now. */
  webhooks: Map<string, WebhookTarget>;
}

/** What an attempt's record writes to its delivery's row. */
function outcomeOf(record: AttemptRecord): DeliveryOutcome {
  const delivered = record.result.error === undefined;
  const retryInMs = delivered || record.retryInMs === undefined ? null : record.retryInMs;
  return {
    id: record.claim.id,
    status: delivered ? 'delivered' : retryInMs === null ? 'failed' : 'pending',
    lastStatus: record.result.status ?? null,
    lastError: record.result.error?.slice(0, 500) ?? null,
    retryInMs,
    durationMs: record.result.durationMs,
  };
}

/**
 * Records attempts of claimed deliveries (any webhooks), in one transaction: each delivery's outcome
 * in one statement, and each webhook's failures in a row, counted in the order the attempts are
 * given (a success resets them). An attempt whose lease was lost meanwhile is not recorded.
 */
export async function recordAttempts(db: Db, records: AttemptRecord[]): Promise<RecordedAttempts> {
  if (records.length === 0) return { recorded: new Set(), webhooks: new Map() };
  const dialect = dialectOf(db);
  const webhookIds = [...new Set(records.map((r) => r.claim.webhookId))].sort();
  return retryConflicts(() => db.transaction(async (trx) => {
    // The webhook rows first, in id order, as claimDeliveries locks them: the same order, so the two never deadlock.
    const targets = await trx('webhooks as w').select(TARGET_COLUMNS(trx)).whereIn('w.id', webhookIds).orderBy('w.id').modify(lockWebhook);
    const webhooks = new Map<string, WebhookTarget>(targets.map((row: Record<string, unknown>) => [String(row.id), targetFromRow(row)]));
    const leases = await trx('deliveries').select('id', 'lease_token').whereIn('id', records.map((r) => r.claim.id)).forUpdate();
    const held = new Map(leases.map((row: Record<string, unknown>) => [String(row.id), row.lease_token === null ? null : String(row.lease_token)]));
    const kept = records.filter((r) => held.get(r.claim.id) === r.claim.leaseToken);
    // A redelivery asked for during the attempt took the lease's token and left its time (redeliver):
    // the attempt is over, so its place among the webhook's 2 in flight is free for the redelivery.
    const redelivered = records.filter((r) => held.get(r.claim.id) === null).map((r) => r.claim.id);
    if (redelivered.length > 0) await trx('deliveries').whereIn('id', redelivered).whereNull('lease_token').update({ lease_until: null });
    if (kept.length > 0) await dialect.recordDeliveryOutcomes(trx, kept.map(outcomeOf));
    for (const webhookId of webhookIds) {
      const attempts = kept.filter((r) => r.claim.webhookId === webhookId);
      if (attempts.length === 0) continue;
      const lastSuccess = attempts.findLastIndex((r) => r.result.error === undefined);
      await trx('webhooks')
        .where({ id: webhookId })
        .update(lastSuccess >= 0
          ? { failures_in_row: attempts.length - 1 - lastSuccess, last_success_at: trx.fn.now(3) }
          : { failures_in_row: trx.raw('failures_in_row + ?', [attempts.length]) });
    }
    return { recorded: new Set(kept.map((r) => r.claim.id)), webhooks };
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
  // A lease still running keeps its time, not its token: the delivery may be in flight, and a second
  // sender taking it now would make one request more than the webhook's 2 in flight. Its sender's
  // attempt is then not recorded, and recording it frees the place (recordAttempts).
  const now = dialectOf(db).now(db);
  const changed = await db('deliveries')
    .where({ id: deliveryId, webhook_id: webhookId })
    .update({
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_until: db.raw('case when lease_until > ? then lease_until else null end', [now]),
      lease_token: null,
      updated_at: now,
    });
  if (affectedCount(changed) === 0) throw new AppError('not_found', `no delivery ${deliveryId} of webhook ${webhookId}`);
}

/** Deletes finished deliveries older than `days`. Scheduled work: (db, now). */
export async function expireDeliveries(db: Db, now: Date, days = 30): Promise<number> {
  return affectedCount(await db('deliveries')
    .whereIn('status', ['delivered', 'failed'])
    .where('updated_at', '<', new Date(now.getTime() - days * 86_400_000))
    .delete());
}
