// The audit log: who did what, from where, with what outcome (docs/webhooks.md, "Audit log").
import * as z from 'zod';
import { NO_NUL, NO_NUL_MESSAGE, PageInfo, offsetDateTime } from './common.js';

export const AUDIT_ACTIONS = [
  'login', 'user.created', 'user.password_changed', 'user.deleted', 'token.created', 'token.revoked',
  'version.published', 'version.deleted', 'version.restored', 'webhook.created', 'webhook.changed',
  'webhook.deleted', 'webhook.disabled', 'retention.policy_changed', 'retention.policy_deleted', 'retention.run',
  'token.exchanged', 'trusted_publisher.created', 'trusted_publisher.changed', 'trusted_publisher.deleted',
  'version.promoted', 'version.vetoed', 'version.veto_lifted', 'environments.changed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AuditQuery = z
  .object({
    /** A user name. */
    actor: z.string().max(100, 'at most 100 characters').regex(NO_NUL, NO_NUL_MESSAGE).optional(),
    action: z.enum(AUDIT_ACTIONS).optional(),
    since: offsetDateTime('must be an ISO 8601 date-time with an offset').optional().meta({ format: 'date-time' }),
    until: offsetDateTime('must be an ISO 8601 date-time with an offset').optional().meta({ format: 'date-time' }),
    page: z.coerce.number().int().min(1).default(1),
    size: z.coerce.number().int().min(1).max(1000).default(50),
  })
  .meta({ id: 'AuditQuery' });
export type AuditQuery = z.output<typeof AuditQuery>;

export const AuditEntry = z
  .object({
    id: z.string(),
    at: z.string().meta({ format: 'date-time' }),
    actor: z.object({ userId: z.string().nullable(), username: z.string().nullable(), tokenId: z.string().nullable() }),
    via: z.enum(['password', 'session', 'token']).nullable(),
    action: z.string(),
    target: z.string().nullable(),
    outcome: z.enum(['ok', 'denied', 'failed']),
    address: z.string().nullable(),
    requestId: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditPage = z
  .object({
    entries: z.array(AuditEntry),
    page: PageInfo,
  })
  .meta({ id: 'AuditPage' });
export type AuditPage = z.infer<typeof AuditPage>;
