// An audit entry as it is written: its own module, so that the dialects (which write a publish's
// entry with the record) and the audit log's module (which imports the dialects) both take it
// without importing each other.

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
