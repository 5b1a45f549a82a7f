// The audit log: who did what, from where, with what outcome (docs/webhooks.md, "Audit log").
// Never a password, token or secret: details pass through withoutSecrets before they are stored.
import type { Db } from './dialects/index.js';
import { affectedCount, toDate, toNumber } from './rows.js';
import { cachedRows } from './statements.js';
import type { AuditEntry, AuditOutcome, AuditVia } from './audit-entry.js';

export type { AuditEntry, AuditOutcome, AuditVia } from './audit-entry.js';

export interface StoredAuditEntry extends Required<Omit<AuditEntry, 'actor'>> {
  id: string;
  at: Date;
  actor: { userId: string | null; username: string | null; tokenId: string | null };
}

/** Keys whose values are never stored: passwords, tokens, secrets, credentials of any kind. */
const SECRET_KEY = /pass|secret|token(?!Id$)|authorization|credential|cookie|hash/i;

/** Keys whose values are addresses, stored by redactedUrl. */
const URL_KEY = /url$/i;

/**
 * An address as the audit log keeps it: its scheme, host and port, and the shape of its path, each
 * segment replaced by `*`; query and fragment likewise. A receiver's secret often is a path segment
 * (`/services/T0/B0/XXXX`) or a parameter (`?token=`), and no rule tells it from a plain word.
 */
export function redactedUrl(address: string): string {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return '*';
  }
  const path = url.pathname.replace(/[^/]+/g, '*');
  return `${url.protocol}//${url.host}${path}${url.search ? '?*' : ''}${url.hash ? '#*' : ''}`;
}

/** The details with every secret-looking key dropped and every address redacted, at any depth. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => !SECRET_KEY.test(key))
      .map(([key, v]) => [key, URL_KEY.test(key) && typeof v === 'string' ? redactedUrl(v) : withoutSecrets(v)]),
  );
}

/** Who acted: an entry's first columns, which a publish's entry takes from its check's row. */
const ACTOR_COLUMNS = ['user_id', 'username', 'token_id'];
/** What was done, from where, with what outcome: the rest of an entry's columns. */
const ENTRY_COLUMNS = ['via', 'action', 'target', 'outcome', 'address', 'request_id', 'details'];
const AUDIT_COLUMNS = [...ACTOR_COLUMNS, ...ENTRY_COLUMNS];

/** The most entries one statement writes; longer lists take several. */
export const AUDIT_BATCH = 16;

/** An entry's values, in the order of AUDIT_COLUMNS. */
function auditValues(entry: AuditEntry): unknown[] {
  return [entry.actor?.userId ?? null, entry.actor?.username?.slice(0, 100) ?? null, entry.actor?.tokenId ?? null, ...entryValues(entry)];
}

/** An entry's values other than its actor's, in the order of ENTRY_COLUMNS. */
export function entryValues(entry: AuditEntry): unknown[] {
  return [
    entry.via ?? null,
    entry.action,
    entry.target?.slice(0, 500) ?? null,
    entry.outcome,
    entry.address?.slice(0, 100) ?? null,
    entry.requestId?.slice(0, 100) ?? null,
    entry.details ? JSON.stringify(withoutSecrets(entry.details)) : null,
  ];
}

/**
 * An `insert ... select` that writes an entry whose actor is three expressions of the caller's FROM
 * (its user id, username and token id) and whose other values follow as placeholders (entryValues):
 * the caller adds the FROM. A publish on PostgreSQL and PGlite writes its entry so, in its own
 * statement, from its check's row (server/db/dialects/postgres.ts).
 */
export function auditFromRowSql(actor: [userId: string, username: string, tokenId: string]): string {
  return `insert into audit (${AUDIT_COLUMNS.join(', ')}) select ${actor.join(', ')}, ${ENTRY_COLUMNS.map(() => '?').join(', ')}`;
}

export async function writeAudit(db: Db, entry: AuditEntry): Promise<void> {
  await writeAudits(db, [entry]);
}

/**
 * Writes entries in statements of up to AUDIT_BATCH rows, each built once per number of rows
 * (server/db/statements.ts), in the order given.
 */
export async function writeAudits(db: Db, entries: AuditEntry[]): Promise<void> {
  for (let start = 0; start < entries.length; start += AUDIT_BATCH) {
    const batch = entries.slice(start, start + AUDIT_BATCH);
    await cachedRows(db, `audit:insert:${batch.length}`, batch.flatMap(auditValues), () => {
      const row = `(${AUDIT_COLUMNS.map(() => '?').join(', ')})`;
      return `insert into audit (${AUDIT_COLUMNS.join(', ')}) values ${Array.from(batch, () => row).join(', ')}`;
    });
  }
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
