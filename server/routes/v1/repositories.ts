// The repository endpoints: publish, search, latest, one record, deleting one (docs/retention.md).
import {
  LatestQuery,
  PAGE_SIZE_MAX,
  PublishResult,
  SORT_FIELDS,
  SearchFiltersBody,
  PageRequestQuery,
  SearchResult,
  UidParams,
  VersionInformation,
  VersionRecord,
} from '../../../common/schemas/repositories.js';
import { DeleteQuery } from '../../../common/schemas/trash.js';
import { endpoint } from '../../http/endpoint.js';
import { PUBLISH_OWNER } from '../../policy/publish.js';
import { deleteRecord } from '../../services/trash.js';
import { byUid, latest, publish, recordOf, search } from '../../services/versions.js';

/** A record's coordinates as its publish's audit entry names them (also used by the benchmark). */
export const publishTarget = (r: VersionRecord) => `${r.projectName}/${r.branch}/${r.artifact.groupId}:${r.artifact.artifactId}:${r.artifact.version}`;
const queryParameter = (name: string, schema: object, description: string) => ({ name, in: 'query', schema, description });

export const repositoryEndpoints = [
  endpoint({
    method: 'POST',
    path: '/v1/repositories',
    summary: 'Store a version record (replaces the record of the same coordinates)',
    tags: ['repository'],
    // The publish statement checks what the database knows of the credential (server/services/versions.ts).
    access: { scope: 'publish', purpose: 'publishing', checkedByHandler: true, owner: PUBLISH_OWNER },
    idempotent: true,
    body: VersionRecord,
    responses: {
      200: { description: 'Replaced', schema: PublishResult },
      201: { description: 'Created', schema: PublishResult },
      400: { description: 'Invalid record' },
    },
    audit: { action: 'version.published', target: (req) => publishTarget(req.body) },
    count: (metrics, status) => {
      if (status === 200 || status === 201) metrics.publishes.inc({ created: String(status === 201) });
    },
    // The entry is written with the record, in the same statement or transaction.
    handler: async (req, services) => {
      const result = await publish(services, req.credential!, req.body, req.auditEntry());
      return { status: result.created ? 201 : 200, body: result, audit: { written: true } };
    },
  }),
  endpoint({
    method: 'POST',
    path: '/v1/repositories/search',
    summary: 'Search version records; `*` is a wildcard',
    tags: ['repository'],
    access: 'reader',
    idempotent: true,
    readReplica: true,
    query: PageRequestQuery,
    queryDoc: [
      queryParameter('page', { type: 'integer', minimum: 0, default: 1 }, 'page number, from 1'),
      queryParameter('size', { type: 'integer', minimum: 1, maximum: PAGE_SIZE_MAX, default: 10 }, 'page size'),
      queryParameter('aPage', { type: 'integer', minimum: 0 }, 'older clients: page number from 0'),
      queryParameter('aSize', { type: 'integer', minimum: 1 }, 'older clients: page size (over 100 reads as 100)'),
      queryParameter('sortField', { type: 'string', enum: [...SORT_FIELDS] }, 'sort field; version sorts version-aware'),
      queryParameter('sortDirection', { type: 'string', enum: ['ASC', 'DESC'] }, 'sort direction (any case)'),
    ],
    body: SearchFiltersBody,
    bodyOptional: true,
    responses: {
      200: { description: 'Matches', schema: SearchResult },
      400: { description: 'Invalid filter or paging' },
    },
    handler: async (req, services) => ({ body: await search(services, req.body, req.query) }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/repositories/latest',
    summary: 'The latest version of an artifact',
    tags: ['repository'],
    access: 'reader',
    readReplica: true,
    query: LatestQuery,
    responses: { 200: { description: 'The record', schema: VersionInformation }, 404: { description: 'None' } },
    handler: async (req, services) => ({ body: await latest(services, req.query) }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/repositories/{uid}',
    summary: 'One version record',
    tags: ['repository'],
    access: 'reader',
    readReplica: true,
    params: UidParams,
    responses: { 200: { description: 'The record', schema: VersionInformation }, 400: { description: 'Not a UUID' }, 404: { description: 'None' } },
    handler: async (req, services) => ({ body: await byUid(services, req.params.uid) }),
  }),
  endpoint({
    method: 'DELETE',
    path: '/v1/repositories/{uid}',
    summary: 'Move a record to the trash',
    description:
      "Administrators; a ROLE_USER for its own project; project tokens of the scope delete. A key's latest record (and a record of an immutable version) needs force=true; the key's highest remaining version then becomes the latest.",
    tags: ['repository'],
    access: { scope: 'delete', purpose: 'deleting a record', owner: { rule: 'project', doing: 'delete only records of' } },
    params: UidParams,
    query: DeleteQuery,
    subject: (req, services) => recordOf(services, req.params.uid),
    responses: {
      204: { description: 'In the trash' },
      400: { description: 'Not a UUID, or force is not true or false' },
      404: { description: 'No such record' },
      409: { description: "The key's latest record, or an immutable version, without force=true" },
    },
    audit: { action: 'version.deleted', target: (req) => req.params.uid },
    handler: async (req, services) => {
      const deleted = await deleteRecord(services, req.actor!, req.params.uid, req.query.force);
      return { status: 204, audit: { details: { latestMovedTo: deleted.latestMovedTo } } };
    },
  }),
];
