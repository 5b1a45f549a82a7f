// The trash and restoring from it (docs/retention.md); deleting is a repository endpoint.
import { UidParams, VersionInformation } from '../../../common/schemas/repositories.js';
import { TrashPage, TrashQuery } from '../../../common/schemas/trash.js';
import { endpoint } from '../../http/endpoint.js';
import { restoreRecord, trashPage, trashedRecordOf } from '../../services/trash.js';

export const trashEndpoints = [
  endpoint({
    method: 'GET',
    path: '/v1/trash',
    summary: 'Records in the trash, newest deletion first',
    description: "Administrators see every project's; a ROLE_USER (or its project token of the scope delete) its own project's.",
    tags: ['repository'],
    access: { scope: 'delete', purpose: 'reading the trash', owner: { rule: 'project', doing: 'see only the trash of' } },
    query: TrashQuery,
    subject: (req) => ({ projectName: req.query.projectName }),
    responses: {
      200: { description: 'A page of the trash', schema: TrashPage },
      400: { description: 'Invalid paging' },
    },
    handler: async (req, services) => ({ body: await trashPage(services, req.allowed, req.query) }),
  }),
  endpoint({
    method: 'POST',
    path: '/v1/trash/{uid}/restore',
    summary: 'Put a record of the trash back',
    tags: ['repository'],
    access: { scope: 'delete', purpose: 'restoring from the trash', owner: { rule: 'project', doing: 'restore only records of' } },
    params: UidParams,
    subject: (req, services) => trashedRecordOf(services, req.params.uid),
    responses: {
      200: { description: 'The record, as stored again', schema: VersionInformation },
      400: { description: 'Not a UUID' },
      404: { description: 'No such record in the trash' },
      409: { description: 'Its coordinates were published again meanwhile' },
    },
    audit: { action: 'version.restored', target: (req) => req.params.uid },
    handler: async (req, services) => ({ body: await restoreRecord(services, req.actor!, req.params.uid) }),
  }),
];
