// Environments and promotion (docs/api.md, "Environments and promotion"): each project's
// environments, promotions and their history, and a version's veto.
import { EnvironmentList, EnvironmentsRequest, ProjectParams, Promotion, PromotionPage, PromotionRequest, PromotionsQuery } from '../../../common/schemas/environments.js';
import { UidParams, VersionInformation, VetoRequest } from '../../../common/schemas/repositories.js';
import { endpoint } from '../../http/endpoint.js';
import { environments, liftVeto, promoteRecord, promotionHistory, promotionOf, setEnvironments, vetoRecord } from '../../services/environments.js';
import { recordOf } from '../../services/versions.js';

const PROMOTE = { scope: 'promote', purpose: 'promoting versions', owner: { rule: 'environment', doing: 'promote' } } as const;
const VETO = { scope: 'promote', purpose: 'vetoing versions', owner: { rule: 'project', doing: 'veto versions only in' } } as const;

export const environmentEndpoints = [
  endpoint({
    method: 'PUT',
    path: '/v1/projects/{projectName}/environments',
    summary: "Set a project's environments, in order, with their gates",
    description: 'An environment left out is removed with its current versions; its promotion history stays.',
    tags: ['environments'],
    access: { role: 'ROLE_ADMIN', purpose: 'change environments' },
    params: ProjectParams,
    body: EnvironmentsRequest,
    responses: {
      200: { description: 'The list, with what is current in each', schema: EnvironmentList },
      400: { description: 'Invalid list: a name twice, requires not naming an earlier one, soakMinutes without requires' },
    },
    audit: { action: 'environments.changed', target: (req) => req.params.projectName },
    handler: async (req, services) => {
      const { list, removed } = await setEnvironments(services, req.params.projectName, req.body);
      return { body: list, audit: { details: { environments: req.body.environments.map((e) => e.name), removed } } };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/projects/{projectName}/environments',
    summary: "A project's environments, each with its current version per artifact, who promoted it and when",
    tags: ['environments'],
    access: 'reader',
    readReplica: true,
    params: ProjectParams,
    responses: {
      200: { description: 'The list (empty when the project has none)', schema: EnvironmentList },
    },
    handler: async (req, services) => ({ body: await environments(services, req.params.projectName) }),
  }),
  endpoint({
    method: 'POST',
    path: '/v1/promotions',
    summary: 'Make a record the current version of its artifact in an environment',
    description:
      'Administrators; users of the project; its project tokens of the scope promote. Protected environments: administrators, and tokens whose trusted publisher lists the environment. Refusals by a gate are 409 naming it: `requires staging: ...`, `soak: 12 of 30 minutes in staging`, `vetoed: <reason>`.',
    tags: ['environments'],
    access: PROMOTE,
    idempotent: true,
    body: PromotionRequest,
    subject: (req, services) => promotionOf(services, req.body),
    responses: {
      200: { description: 'Current there already: nothing recorded; the promotion that made it current', schema: Promotion },
      201: { description: 'Promoted', schema: Promotion },
      400: { description: 'Invalid request' },
      404: { description: 'No such record (or it is in the trash), or no such environment' },
      409: { description: 'A gate refused: requires, soak or veto' },
    },
    audit: { action: 'version.promoted', target: (req) => `${req.body.environment}:${req.body.uid ?? `${req.body.projectName}/${req.body.branch}/${req.body.groupId}:${req.body.artifactId}:${req.body.version}`}` },
    handler: async (req, services) => {
      const { promotion, created } = await promoteRecord(services, req.actor!, req.body, req.subject);
      return {
        status: created ? 201 : 200,
        body: promotion,
        audit: { target: `${promotion.environment}:${promotion.uid}`, details: { recorded: created, version: promotion.version, previousUid: promotion.previousUid, rollback: promotion.rollback } },
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/promotions',
    summary: 'The promotion history, newest first',
    tags: ['environments'],
    access: 'reader',
    readReplica: true,
    query: PromotionsQuery,
    responses: {
      200: { description: 'A page of promotions', schema: PromotionPage },
      400: { description: 'Invalid filter or paging' },
    },
    handler: async (req, services) => ({ body: await promotionHistory(services, req.query) }),
  }),
  endpoint({
    method: 'PUT',
    path: '/v1/repositories/{uid}/veto',
    summary: 'Veto a version: it cannot be promoted anywhere until the veto is lifted',
    description: "Administrators and the project's users (and their project tokens of the scope promote). A new reason replaces the old one.",
    tags: ['environments'],
    access: VETO,
    params: UidParams,
    body: VetoRequest,
    subject: (req, services) => recordOf(services, req.params.uid),
    responses: {
      200: { description: 'The record, with its veto', schema: VersionInformation },
      400: { description: 'Not a UUID, or no reason' },
      404: { description: 'No such record' },
    },
    audit: { action: 'version.vetoed', target: (req) => req.params.uid },
    handler: async (req, services) => ({
      body: await vetoRecord(services, req.actor!, req.params.uid, req.body.reason),
      audit: { details: { reason: req.body.reason } },
    }),
  }),
  endpoint({
    method: 'DELETE',
    path: '/v1/repositories/{uid}/veto',
    summary: "Lift a version's veto",
    tags: ['environments'],
    access: VETO,
    params: UidParams,
    subject: (req, services) => recordOf(services, req.params.uid),
    responses: {
      200: { description: 'The record, without a veto', schema: VersionInformation },
      400: { description: 'Not a UUID' },
      404: { description: 'No such record' },
    },
    audit: { action: 'version.veto_lifted', target: (req) => req.params.uid },
    handler: async (req, services) => ({ body: await liftVeto(services, req.actor!, req.params.uid) }),
  }),
];
