// Retention policies (docs/retention.md): which records a policy removes, and what a run answers.
import * as z from 'zod';
import { Timestamp, Uuid, text } from './common.js';
import { VersionInformation } from './repositories.js';

export const POLICY_NAME_MAX = 100;
export const GLOBS_MAX = 50;
export const GLOB_MAX = 255;
/** Records one run deletes at most; the rest go on the next run. */
export const RUN_DELETE_MAX = 10_000;
/** Records a run's answer shows of those it deletes or would delete. */
export const RUN_SAMPLE_SIZE = 20;
export const DAYS_MAX = 36_500;

/** Globs: `*` stands for any characters (`/` included), `\*` for an asterisk, as in searches. */
const globs = (fallback: string[]) =>
  z.array(text(GLOB_MAX)).min(1, 'must name at least one glob').max(GLOBS_MAX, `at most ${GLOBS_MAX} globs`).optional().default(fallback);
const days = z.number().int('must be a whole number of days').min(1, 'must be 1 or more').max(DAYS_MAX, `at most ${DAYS_MAX}`);

export const DEFAULT_PROTECTED_BRANCHES = ['main', 'master', 'release/*'];

/** The rules of a policy: what it looks at and what of that it removes. */
const ruleFields = {
  projects: globs(['*']),
  branches: globs(['*']),
  /** Untouched by every rule of the policy. */
  protectedBranches: globs(DEFAULT_PROTECTED_BRANCHES),
  /** Kept per key (project, branch, group, artifact): the N highest by version order, and the latest. */
  keepLast: z.number().int('must be a whole number').min(1, 'must be 1 or more').max(1_000_000, 'at most 1000000'),
  /** Beyond the kept ones, only records older than this many days go. */
  olderThanDays: days.nullable().optional(),
  /** Every record (but a key's latest) of an unprotected branch with no publish for this many days goes. */
  inactiveBranchDays: days.nullable().optional(),
};

export const RetentionRules = z.object(ruleFields);
export type RetentionRules = z.output<typeof RetentionRules>;

export const RetentionPolicyCreate = z
  .object({ name: text(POLICY_NAME_MAX), ...ruleFields, enabled: z.boolean().optional().default(false) })
  .strict()
  .meta({ id: 'RetentionPolicyCreate' });
export type RetentionPolicyCreate = z.output<typeof RetentionPolicyCreate>;

export const RetentionPolicyChange = z
  .object({
    name: text(POLICY_NAME_MAX).optional(),
    projects: ruleFields.projects.unwrap().unwrap().optional(),
    branches: ruleFields.branches.unwrap().unwrap().optional(),
    protectedBranches: ruleFields.protectedBranches.unwrap().unwrap().optional(),
    keepLast: ruleFields.keepLast.optional(),
    olderThanDays: days.nullable().optional(),
    inactiveBranchDays: days.nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'RetentionPolicyChange' });
export type RetentionPolicyChange = z.output<typeof RetentionPolicyChange>;

export const RetentionPolicy = z
  .object({
    id: Uuid,
    name: z.string(),
    projects: z.array(z.string()),
    branches: z.array(z.string()),
    protectedBranches: z.array(z.string()),
    keepLast: z.number().int(),
    olderThanDays: z.number().int().nullable(),
    inactiveBranchDays: z.number().int().nullable(),
    enabled: z.boolean(),
    /** Whether the current rules had a dry run (enabling needs one). */
    dryRunDone: z.boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'RetentionPolicy' });
export type RetentionPolicy = z.infer<typeof RetentionPolicy>;

export const RetentionPolicyList = z.object({ policies: z.array(RetentionPolicy) }).meta({ id: 'RetentionPolicyList' });
export type RetentionPolicyList = z.infer<typeof RetentionPolicyList>;

export const RetentionPolicyParams = z.object({ id: Uuid });

export const RetentionRunQuery = z
  .object({
    /** true (the default): count and show, delete nothing. */
    dryRun: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().default('true').transform((v) => v === 'true'),
  })
  .meta({ id: 'RetentionRunQuery' });
export type RetentionRunQuery = z.output<typeof RetentionRunQuery>;

export const RetentionRunResult = z
  .object({
    dryRun: z.boolean(),
    /** A run: records moved to the trash (at most 10,000; the rest go on the next run). */
    deleted: z.number().int().optional(),
    /** A dry run: records a run would delete now (all of them, not capped). */
    wouldDelete: z.number().int().optional(),
    /** Records the policy looks at and keeps. */
    kept: z.number().int(),
    /** Of those kept, the records the rules would remove but whose version is immutable: no policy removes them. */
    keptImmutable: z.number().int(),
    /** Of those kept, the records the rules would remove but that are the current version of an environment: no policy removes them. */
    keptInEnvironments: z.number().int(),
    /** The first 20 records deleted, or that would be. */
    sample: z.array(VersionInformation),
  })
  .meta({ id: 'RetentionRunResult' });
export type RetentionRunResult = z.infer<typeof RetentionRunResult>;
