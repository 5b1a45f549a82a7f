// Environments and promotion (docs/api.md, "Environments and promotion"): each project's ordered
// environments with their gates, the current version of each artifact in each, and promotions.
import * as z from 'zod';
import { PageInfo, Timestamp, Uuid, text } from './common.js';
import { BRANCH_MAX, COORDINATE_MAX, EnvironmentName, PAGE_SIZE_MAX, VersionInformation, wholeNumber } from './repositories.js';
import { PROJECT_NAME_MAX, ProjectName } from './users.js';

/** The most environments a project may have. */
export const ENVIRONMENTS_MAX = 20;
/** The longest soak a gate may ask for: 30 days. */
export const SOAK_MINUTES_MAX = 30 * 24 * 60;
export const PROMOTION_COMMENT_MAX = 500;
export const PROMOTIONS_PAGE_SIZE_DEFAULT = 20;

export const EnvironmentSpec = z
  .object({
    name: EnvironmentName,
    /** An earlier environment of the list: a version must have been current there first. */
    requires: EnvironmentName.optional(),
    /** With `requires`: minutes since the version was first promoted into that environment. */
    soakMinutes: z.int('must be a whole number').min(1, 'must be 1 or more').max(SOAK_MINUTES_MAX, `at most ${SOAK_MINUTES_MAX}`).optional(),
    /** Only administrators, and project tokens whose trusted publisher lists this environment, promote into it. */
    protected: z.boolean().optional(),
  })
  .meta({ id: 'EnvironmentSpec' });
export type EnvironmentSpec = z.infer<typeof EnvironmentSpec>;

export const EnvironmentsRequest = z
  .object({
    /** In order: the first is the earliest (dev, then staging, then prod). */
    environments: z.array(EnvironmentSpec).max(ENVIRONMENTS_MAX, `at most ${ENVIRONMENTS_MAX} environments`),
  })
  .superRefine(({ environments }, ctx) => {
    const seen = new Set<string>();
    environments.forEach((environment, i) => {
      if (seen.has(environment.name)) {
        ctx.addIssue({ code: 'custom', path: ['environments', i, 'name'], message: `${environment.name} is named twice` });
      }
      if (environment.requires !== undefined && !seen.has(environment.requires)) {
        ctx.addIssue({ code: 'custom', path: ['environments', i, 'requires'], message: `must name an earlier environment of the list, not ${environment.requires}` });
      }
      if (environment.soakMinutes !== undefined && environment.requires === undefined) {
        ctx.addIssue({ code: 'custom', path: ['environments', i, 'soakMinutes'], message: 'needs requires: the soak is counted in that environment' });
      }
      seen.add(environment.name);
    });
  })
  .meta({ id: 'EnvironmentsRequest' });
export type EnvironmentsRequest = z.infer<typeof EnvironmentsRequest>;

export const ProjectParams = z.object({ projectName: ProjectName });

/** Who promoted: the user, and the project token when one was used; null where nobody is known. */
export const PromotedBy = z
  .object({ userId: Uuid.nullable(), username: z.string().nullable(), tokenId: Uuid.nullable() })
  .meta({ id: 'PromotedBy' });
export type PromotedBy = z.infer<typeof PromotedBy>;

export const CurrentVersion = z
  .object({
    groupId: z.string(),
    artifactId: z.string(),
    /** The record current in the environment. */
    record: VersionInformation,
    promotionId: Uuid,
    promotedAt: Timestamp,
    promotedBy: PromotedBy,
  })
  .meta({ id: 'CurrentVersion' });
export type CurrentVersion = z.infer<typeof CurrentVersion>;

export const Environment = z
  .object({
    name: z.string(),
    requires: z.string().nullable(),
    soakMinutes: z.number().int().nullable(),
    protected: z.boolean(),
    /** Per artifact (group, artifact), by group then artifact. */
    current: z.array(CurrentVersion),
  })
  .meta({ id: 'Environment' });
export type Environment = z.infer<typeof Environment>;

export const EnvironmentList = z
  .object({
    projectName: z.string(),
    /** In the project's order. */
    environments: z.array(Environment),
  })
  .meta({ id: 'EnvironmentList' });
export type EnvironmentList = z.infer<typeof EnvironmentList>;

/** `POST /v1/promotions`: the record by `uid`, or by its coordinates. */
export const PromotionRequest = z
  .object({
    uid: Uuid.optional(),
    projectName: text(PROJECT_NAME_MAX).optional(),
    branch: text(BRANCH_MAX).optional(),
    groupId: text(COORDINATE_MAX).optional(),
    artifactId: text(COORDINATE_MAX).optional(),
    version: text(COORDINATE_MAX).optional(),
    environment: EnvironmentName,
    /** Why, for the history (a ticket, a change number). */
    comment: text(PROMOTION_COMMENT_MAX).optional(),
  })
  .superRefine((request, ctx) => {
    const coordinates = ['projectName', 'branch', 'groupId', 'artifactId', 'version'] as const;
    const given = coordinates.filter((name) => request[name] !== undefined);
    if (request.uid !== undefined) {
      if (given.length > 0) ctx.addIssue({ code: 'custom', path: [given[0]!], message: 'give either uid or the coordinates, not both' });
    } else {
      for (const name of coordinates) {
        if (request[name] === undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'required without uid' });
      }
    }
  })
  .meta({ id: 'PromotionRequest' });
export type PromotionRequest = z.infer<typeof PromotionRequest>;

export const Promotion = z
  .object({
    id: Uuid,
    /** The record promoted. */
    uid: Uuid,
    projectName: z.string(),
    groupId: z.string(),
    artifactId: z.string(),
    branch: z.string(),
    version: z.string(),
    environment: z.string(),
    /** The record it replaced; null when the environment had none of this artifact. */
    previousUid: Uuid.nullable(),
    previousVersion: z.string().nullable(),
    /** true when the version is lower, in version order, than the one it replaced. */
    rollback: z.boolean(),
    promotedAt: Timestamp,
    promotedBy: PromotedBy,
    comment: z.string().nullable(),
  })
  .meta({ id: 'Promotion' });
export type Promotion = z.infer<typeof Promotion>;

const pageNumber = (name: string, max: number, fallback: number) =>
  wholeNumber(name)
    .pipe(z.number().min(1, 'must be 1 or more').max(max, `at most ${max}`).default(fallback))
    .meta({ type: 'integer', minimum: 1, maximum: max });

export const PromotionsQuery = z
  .object({
    projectName: text(PROJECT_NAME_MAX).optional(),
    groupId: text(COORDINATE_MAX).optional(),
    artifactId: text(COORDINATE_MAX).optional(),
    environment: EnvironmentName.optional(),
    page: pageNumber('page', 1_000_000_000, 1),
    size: pageNumber('size', PAGE_SIZE_MAX, PROMOTIONS_PAGE_SIZE_DEFAULT),
  })
  .meta({ id: 'PromotionsQuery' });
export type PromotionsQuery = z.output<typeof PromotionsQuery>;

export const PromotionPage = z
  .object({
    /** Newest first. */
    promotions: z.array(Promotion),
    page: PageInfo,
  })
  .meta({ id: 'PromotionPage' });
export type PromotionPage = z.infer<typeof PromotionPage>;
