// Writing the audit entry of a request (the pipeline's `services.audit`) and reading the log.
import type { AuditPage, AuditQuery } from '../../common/schemas/audit.js';
import { listAudit, writeAudit } from '../db/audit.js';
import type { AuditRecord, Services } from './context.js';
import { failureFields } from '../db/faults.js';

/** The pipeline's audit writer: never throws, never holds up the answer; a failure is logged. */
export function auditWriter(services: Pick<Services, 'db' | 'log'>): (record: AuditRecord) => void {
  return (record) => {
    const { actor, credential } = record;
    const session = credential?.kind === 'session' ? credential : undefined;
    writeAudit(services.db, {
      actor: {
        userId: actor?.userId ?? session?.userId ?? null,
        username: actor?.username ?? session?.username ?? null,
        tokenId: actor?.projectToken?.id ?? null,
      },
      via: record.via ?? null,
      action: record.action,
      target: record.target ?? null,
      outcome: record.outcome,
      address: record.address,
      requestId: record.requestId,
      details: record.details ?? null,
    }).catch((error: unknown) => services.log.error({ ...failureFields(error), action: record.action }, 'audit entry not written'));
  };
}

export async function auditLog(services: Services, query: AuditQuery): Promise<AuditPage> {
  const { items, total } = await listAudit(services.db, query);
  return {
    entries: items.map((e) => ({ ...e, id: e.id, at: e.at.toISOString() })),
    page: { totalElements: total, totalPages: Math.ceil(total / query.size), currentPage: query.page, numberOfElements: items.length },
  };
}
