// Writing the audit entry of a request (the pipeline's `services.audit`) and reading the log.
import { pageInfo } from '../../common/schemas/common.js';
import type { AuditPage, AuditQuery } from '../../common/schemas/audit.js';
import { AUDIT_BATCH, type AuditEntry, listAudit, writeAudits } from '../db/audit.js';
import type { Db } from '../db/dialects/index.js';
import { findTokenByHash } from '../db/tokens.js';
import type { AuditRecord, Services } from './context.js';
import { failureFields } from '../db/faults.js';

/**
 * The pipeline's audit writer: never throws, never holds up the answer; a failure is logged. Entries
 * wait while an insert is under way and then go together in the next one, so that under load the
 * log costs a statement per batch rather than one per request (docs/benchmarks.md); alone, an entry
 * is written at once.
 */
export function auditWriter(services: Pick<Services, 'db' | 'log'>): (record: AuditRecord) => void {
  const waiting: AuditEntry[] = [];
  let writing = false;
  const writeWaiting = async () => {
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting.splice(0, AUDIT_BATCH);
      try {
        await writeAudits(services.db, batch);
      } catch (error) {
        services.log.error({ ...failureFields(error), actions: [...new Set(batch.map((e) => e.action))], entries: batch.length }, 'audit entries not written');
      }
    }
    writing = false;
  };
  return (record) => {
    actorOf(services.db, record)
      .then((actor) => {
        waiting.push({
          actor,
          via: record.via ?? null,
          action: record.action,
          target: record.target ?? null,
          outcome: record.outcome,
          address: record.address,
          requestId: record.requestId,
          details: record.details ?? null,
        });
        if (!writing) void writeWaiting();
      })
      .catch((error: unknown) => services.log.error({ ...failureFields(error), action: record.action }, 'audit entry not written'));
  };
}

/**
 * Who made the request. A publish checks its credential in its own statement (server/policy/publish.ts)
 * and leaves `actor` unset: when it went through, that statement wrote its entry, naming whom it
 * found; when it was refused, a session token names its user, and a project token is looked up by
 * its hash here, after the answer went out (a token revoked in between leaves the entry without its actor).
 */
async function actorOf(db: Db, record: AuditRecord): Promise<NonNullable<AuditEntry['actor']>> {
  const { actor, credential } = record;
  if (actor) return { userId: actor.userId, username: actor.username, tokenId: actor.projectToken?.id ?? null };
  if (credential?.kind === 'session') return { userId: credential.userId, username: credential.username, tokenId: null };
  const token = credential?.kind === 'project' ? await findTokenByHash(db, credential.tokenHash) : undefined;
  return { userId: token?.userId ?? null, username: token?.username ?? null, tokenId: token?.id ?? null };
}

export async function auditLog(services: Services, query: AuditQuery): Promise<AuditPage> {
  const { items, total } = await listAudit(services.db, query);
  return {
    entries: items.map((e) => ({ ...e, id: e.id, at: e.at.toISOString() })),
    page: pageInfo(total, query, items.length),
  };
}
