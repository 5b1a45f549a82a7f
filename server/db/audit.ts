// The audit log: who did what, from where, with what outcome (docs/webhooks.md, "Audit log").
// Never a password, token or secret: details pass through withoutSecrets before they are stored.
import type { Db } from './dialects/index.js';
import { affectedCount, toDate, toNumber } from './rows.js';

export type AuditOutcome = 'ok' | 'denied' | 'failed';
export type AuditVia = 'password' | 'session' | 'token';

export interface AuditEntry {
  actor?: { userId: string | null; username: string | null; tokenId: string | null };
  via?: AuditVia | null;
  action: string;
  target?: string | null;
  outcome: AuditOutcome;
  address?: string | null;
  requestId?: string | null;
  details?: Record<string, unknown> | null;
}

export interface StoredAuditEntry extends Required<Omit<AuditEntry, 'actor'>> {
  id: string;
  at: Date;
  actor: { userId: string | null; username: string | null; tokenId: string | null };
}

/** Keys whose values are never stored: passwords, tokens, secrets, credentials of any kind. */
const SECRET_KEY = /pass|secret|token(?!Id$)|authorization|credential|cookie|hash/i;

/** The details with every secret-looking key dropped, at any depth. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => !SECRET_KEY.test(key))
      .map(([key, v]) => [key, withoutSecrets(v)]),
  );
}

export async function writeAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db('audit').insert({
    user_id: entry.actor?.userId ?? null,
    username: entry.actor?.username?.slice(0, 100) ?? null,
    token_id: entry.actor?.tokenId ?? null,
    via: entry.via ?? null,
    action: entry.action,
    target: entry.target?.slice(0, 500) ?? null,
    outcome: entry.outcome,
    address: entry.address?.slice(0, 100) ?? null,
    request_id: entry.requestId?.slice(0, 100) ?? null,
    details: entry.details ? JSON.stringify(withoutSecrets(entry.details)) : null,
  });
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  since?: Date;
  until?: Date;
  page: number;
  size: number;
}

function fromRow(row: Record<string, unknown>): StoredAuditEntry {
  return {
    id: String(row.id),
    at: toDate(row.at),
    actor: { userId: (row.user_id as string | null) ?? null, username: (row.username as string | null) ?? null, tokenId: (row.token_id as string | null) ?? null },
    via: (row.via as AuditVia | null) ?? null,
    action: String(row.action),
    target: (row.target as string | null) ?? null,
    outcome: String(row.outcome) as AuditOutcome,
    address: (row.address as string | null) ?? null,
    requestId: (row.request_id as string | null) ?? null,
    details: row.details === null ? null : (JSON.parse(String(row.details)) as Record<string, unknown>),
  };
}

/** Entries newest first. */
export async function listAudit(db: Db, filter: AuditFilter): Promise<{ items: StoredAuditEntry[]; total: number }> {
  const where = (q: ReturnType<typeof db>) => {
    if (filter.actor !== undefined) q.where('username', filter.actor);
    if (filter.action !== undefined) q.where('action', filter.action);
    if (filter.since) q.where('at', '>=', filter.since);
    if (filter.until) q.where('at', '<', filter.until);
    return q;
  };
  const [rows, [count]] = await Promise.all([
    where(db('audit').select('*')).orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.size).offset((filter.page - 1) * filter.size),
    where(db('audit').count({ n: '*' })),
  ]);
  return { items: rows.map(fromRow), total: toNumber(count?.n) };
}

/** Deletes entries older than `days` (365 by default). Scheduled work: (db, now). */
export async function expireAudit(db: Db, now: Date, days: number): Promise<number> {
  return affectedCount(await db('audit').where('at', '<', new Date(now.getTime() - days * 86_400_000)).delete());
}
