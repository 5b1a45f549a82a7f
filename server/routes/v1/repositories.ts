// The repository routes: publish, search, latest, one record.
import type { Context } from 'koa';
import {
  LatestQuery,
  PAGE_SIZE_MAX,
  PublishResult,
  SORT_FIELDS,
  SearchFiltersBody,
  PageRequestQuery,
  SearchRequest,
  SearchResult,
  UidParams,
  VersionInformation,
  VersionRecord,
} from '../../../common/schemas/repositories.js';
import { currentActor, optionalToken, requireToken, signedCredential } from '../../middleware/auth.js';
import { readJson } from '../../middleware/body.js';
import { parse, parseQuery } from '../../middleware/validate.js';
import type { Services } from '../../services/context.js';
import { byUid, latest, publish, publishChecked, publishesChecked, search } from '../../services/versions.js';
import { type Endpoint, bearer, error, json, publicOrBearer, query, uuidPath } from '../endpoint.js';

/** Reading needs a token unless the server lets anyone search (REPO_MAN_SEARCH_PUBLIC). */
const reader = (services: Services) => optionalToken(services, () => !services.config.searchPublic);

export const repositoryEndpoints: Endpoint[] = [
  {
    method: 'post',
    path: '/v1/repositories',
    doc: {
      tags: ['repository'],
      summary: 'Store a version record (replaces the record of the same coordinates)',
      security: bearer,
      requestBody: { required: true, ...json(VersionRecord) },
      responses: {
        200: { description: 'Replaced', ...json(PublishResult) },
        201: { description: 'Created', ...json(PublishResult) },
        400: error('Invalid record'),
        401: error('No valid token'),
        403: error('Another project, or a project token of the scope read'),
      },
    },
    handlers: (services) => {
      const authorize = requireToken(services, { scope: 'publish' });
      const checksInStatement = publishesChecked(services);
      const answer = (ctx: Context, result: PublishResult) => {
        ctx.status = result.created ? 201 : 200;
        ctx.body = result;
      };
      const publishAs = async (ctx: Context, record: VersionRecord) => answer(ctx, await publish(services, currentActor(ctx), record));
      return [
        async (ctx, next) => {
          // Where the database can, a signed token goes with the record to it, and the publish
          // statement checks its user and token itself. A credential that fails there, or a record
          // that fails validation, takes the usual way, so the answer is the same as the usual
          // way's, down to a credential problem being reported before a problem with the record.
          const credential = checksInStatement ? signedCredential(services, ctx.get('Authorization')) : undefined;
          if (!credential) return authorize(ctx, next);
          let record: VersionRecord;
          try {
            record = parse(VersionRecord, await readJson(ctx));
          } catch (error) {
            await authorize(ctx, async () => {});
            throw error;
          }
          const result = await publishChecked(services, credential, record);
          return result ? answer(ctx, result) : authorize(ctx, () => publishAs(ctx, record));
        },
        async (ctx) => publishAs(ctx, parse(VersionRecord, await readJson(ctx))),
      ];
    },
  },
  {
    method: 'post',
    path: '/v1/repositories/search',
    doc: {
      tags: ['repository'],
      summary: 'Search version records; `*` is a wildcard',
      security: publicOrBearer,
      parameters: [
        query('page', { type: 'integer', minimum: 0, default: 1 }, 'page number, from 1'),
        query('size', { type: 'integer', minimum: 1, maximum: PAGE_SIZE_MAX, default: 10 }, 'page size'),
        query('aPage', { type: 'integer', minimum: 0 }, 'older clients: page number from 0'),
        query('aSize', { type: 'integer', minimum: 1 }, 'older clients: page size (over 100 reads as 100)'),
        query('sortField', { type: 'string', enum: [...SORT_FIELDS] }, 'sort field; version sorts version-aware'),
        query('sortDirection', { type: 'string', enum: ['ASC', 'DESC'] }, 'sort direction (any case)'),
      ],
      requestBody: { required: false, ...json(SearchRequest) },
      responses: { 200: { description: 'Matches', ...json(SearchResult) }, 400: error('Invalid filter or paging'), 401: error('A token is required on this server') },
    },
    handlers: (services) => [
      reader(services),
      async (ctx) => {
        const paging = parseQuery(PageRequestQuery, ctx.query);
        const filters = parse(SearchFiltersBody, await readJson(ctx, { optional: true }));
        ctx.body = await search(services, filters, paging);
      },
    ],
  },
  {
    method: 'get',
    path: '/v1/repositories/latest',
    doc: {
      tags: ['repository'],
      summary: 'The latest version of an artifact',
      security: publicOrBearer,
      parameters: [
        { ...query('groupId', { type: 'string' }, 'group'), required: true },
        { ...query('artifactId', { type: 'string' }, 'artifact'), required: true },
        query('branch', { type: 'string' }, 'branch'),
        query('projectName', { type: 'string' }, 'project'),
      ],
      responses: { 200: { description: 'The record', ...json(VersionInformation) }, 404: error('None') },
    },
    handlers: (services) => [
      reader(services),
      async (ctx) => {
        ctx.body = await latest(services, parseQuery(LatestQuery, ctx.query));
      },
    ],
  },
  {
    method: 'get',
    path: '/v1/repositories/:uid',
    doc: {
      tags: ['repository'],
      summary: 'One version record',
      security: publicOrBearer,
      parameters: [uuidPath('uid')],
      responses: { 200: { description: 'The record', ...json(VersionInformation) }, 400: error('Not a UUID'), 404: error('None') },
    },
    handlers: (services) => [
      reader(services),
      async (ctx) => {
        ctx.body = await byUid(services, parse(UidParams, ctx.params).uid);
      },
    ],
  },
];
