// Retention policies (docs/retention.md): administrators only.
import {
  RetentionPolicy,
  RetentionPolicyChange,
  RetentionPolicyCreate,
  RetentionPolicyList,
  RetentionPolicyParams,
  RetentionRunQuery,
  RetentionRunResult,
} from '../../../common/schemas/retention.js';
import { endpoint } from '../../http/endpoint.js';
import { changePolicy, createPolicy, policies, policy, removePolicy, runPolicy } from '../../services/retention.js';

const ADMIN = { role: 'ROLE_ADMIN', purpose: 'manage retention policies' } as const;
const tags = ['retention'];

export const retentionEndpoints = [
  endpoint({
    method: 'POST',
    path: '/v1/retention/policies',
    summary: 'Make a retention policy (disabled until a dry run of its rules)',
    tags,
    access: ADMIN,
    body: RetentionPolicyCreate,
    responses: {
      201: { description: 'Made', schema: RetentionPolicy },
      400: { description: 'Invalid rules' },
      409: { description: 'The name is taken, or enabled before a dry run' },
    },
    // Every retention entry names the policy by its id, as its target, and by its name, in its details.
    audit: { action: 'retention.policy_changed' },
    handler: async (req, services) => {
      const created = await createPolicy(services, req.body);
      return { status: 201, body: created, audit: { target: created.id, details: { name: created.name, created: true } } };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/retention/policies',
    summary: 'Every retention policy',
    tags,
    access: ADMIN,
    responses: {
      200: { description: 'The policies', schema: RetentionPolicyList },
    },
    handler: async (_req, services) => ({ body: await policies(services) }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/retention/policies/{id}',
    summary: 'One retention policy',
    tags,
    access: ADMIN,
    params: RetentionPolicyParams,
    responses: {
      200: { description: 'The policy', schema: RetentionPolicy },
      400: { description: 'Not a UUID' },
      404: { description: 'No such policy' },
    },
    handler: async (req, services) => ({ body: await policy(services, req.params.id) }),
  }),
  endpoint({
    method: 'PATCH',
    path: '/v1/retention/policies/{id}',
    summary: 'Change a retention policy',
    description: 'Enabling needs a dry run of the rules it will have; new rules without a dry run of them disable the policy.',
    tags,
    access: ADMIN,
    params: RetentionPolicyParams,
    body: RetentionPolicyChange,
    responses: {
      200: { description: 'The policy as changed', schema: RetentionPolicy },
      400: { description: 'Invalid rules' },
      404: { description: 'No such policy' },
      409: { description: 'Enabled before a dry run of its rules, or the name is taken' },
    },
    audit: { action: 'retention.policy_changed', target: (req) => req.params.id },
    handler: async (req, services) => {
      const changed = await changePolicy(services, req.params.id, req.body);
      return { body: changed, audit: { details: { name: changed.name, changed: req.body } } };
    },
  }),
  endpoint({
    method: 'DELETE',
    path: '/v1/retention/policies/{id}',
    summary: 'Remove a retention policy',
    tags,
    access: ADMIN,
    params: RetentionPolicyParams,
    responses: {
      204: { description: 'Removed' },
      400: { description: 'Not a UUID' },
      404: { description: 'No such policy' },
    },
    audit: { action: 'retention.policy_deleted', target: (req) => req.params.id },
    handler: async (req, services) => {
      const removed = await removePolicy(services, req.params.id);
      return { status: 204, audit: { details: { name: removed.name } } };
    },
  }),
  endpoint({
    method: 'POST',
    path: '/v1/retention/policies/{id}/run',
    summary: 'Run a policy now, or (dryRun=true, the default) count what it would delete',
    description: 'A run moves at most 10,000 records to the trash, and only after a dry run of the current rules.',
    tags,
    access: ADMIN,
    params: RetentionPolicyParams,
    query: RetentionRunQuery,
    responses: {
      200: { description: 'What was deleted, or would be', schema: RetentionRunResult },
      400: { description: 'Not a UUID, or dryRun is not true or false' },
      404: { description: 'No such policy' },
      409: { description: 'A run without a dry run of the current rules' },
    },
    audit: { action: 'retention.run', target: (req) => req.params.id },
    handler: async (req, services) => {
      const result = await runPolicy(services, req.params.id, req.query.dryRun);
      return { body: result, audit: { details: { dryRun: result.dryRun, deleted: result.deleted ?? result.wouldDelete } } };
    },
  }),
];
