// The audit log, for administrators.
import { AuditPage, AuditQuery } from '../../../common/schemas/audit.js';
import { endpoint } from '../../http/endpoint.js';
import { auditLog } from '../../services/audit.js';

export const auditEndpoints = [
  endpoint({
    method: 'GET',
    path: '/v1/audit',
    summary: 'Audit entries, newest first',
    tags: ['audit'],
    access: { role: 'ROLE_ADMIN', purpose: 'read the audit log' },
    query: AuditQuery,
    responses: {
      200: { description: 'A page of entries', schema: AuditPage },
      400: { description: 'Invalid filter' },
    },
    handler: async (req, services) => ({ body: await auditLog(services, req.query) }),
  }),
];
