// Trusted publishing (docs/api.md, "Trusted publishing"): the publishers a project trusts, and the
// exchange of a pipeline's OpenID Connect ID token for a short-lived project token.
import * as z from 'zod';
import { NO_NUL, NO_NUL_MESSAGE, Timestamp, Uuid, text } from './common.js';
import { ENVIRONMENTS_MAX } from './environments.js';
import { BRANCH_MAX, EnvironmentName } from './repositories.js';
import { PROJECT_NAME_MAX } from './users.js';

export const PROVIDERS = ['github', 'gitlab', 'jenkins', 'generic'] as const;
export const Provider = z.enum(PROVIDERS);
export type Provider = z.infer<typeof Provider>;

/** The issuer a publisher of this provider has when it names none; jenkins and generic must name one. */
export const DEFAULT_ISSUERS: Partial<Record<Provider, string>> = {
  github: 'https://token.actions.githubusercontent.com',
  gitlab: 'https://gitlab.com',
};

/**
 * The claims that pin a publisher to one repository or job, per provider: `claims` must name at least
 * one of them, with a value that is not only wildcards (github's `repository_owner_id` is advised
 * besides: it survives renames and blocks the reuse of a deleted owner's name).
 */
export const PINNING_CLAIMS: Record<Provider, readonly string[]> = {
  github: ['repository_id', 'repository'],
  gitlab: ['project_id', 'project_path'],
  jenkins: ['sub'],
  generic: ['sub'],
};

export const CLAIM_NAME_MAX = 100;
export const CLAIM_PATTERN_MAX = 512;
export const CLAIMS_MAX = 20;
export const BRANCH_PATTERNS_MAX = 50;
export const AUDIENCE_MAX = 255;
export const ISSUER_MAX = 512;
export const PUBLISHER_DESCRIPTION_MAX = 1000;
/** An ID token larger than this is refused before it is parsed. */
export const ID_TOKEN_MAX_BYTES = 16 * 1024;
/** Keys an inline JWK Set may hold. */
export const JWKS_KEYS_MAX = 20;
/** What the answer's `scopes` names: `promote` only when the publisher lists environments. */
export const EXCHANGED_SCOPES = ['publish', 'promote'] as const;

/** An environment's name, as promotion names it. */

/** An issuer: an https URL (http only on the networks --repoadmin_oidc_allow_networks names, checked by the server), exactly as its tokens' `iss` writes it. */
const IssuerUrl = z
  .string()
  .max(ISSUER_MAX, `at most ${ISSUER_MAX} characters`)
  .refine((s) => {
    try {
      const url = new URL(s);
      return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password && !url.search && !url.hash;
    } catch {
      return false;
    }
  }, 'must be an https URL without user, query or fragment, e.g. https://token.actions.githubusercontent.com');

const ClaimName = z.string().min(1, 'must not be empty').max(CLAIM_NAME_MAX, `at most ${CLAIM_NAME_MAX} characters`).regex(/^[A-Za-z0-9_.:-]+$/, 'only letters, digits and _ . : -');
/** An exact value, or a glob where `*` stands for any characters (`\*` is a literal asterisk). */
const ClaimPattern = text(CLAIM_PATTERN_MAX);
const BranchPattern = text(BRANCH_MAX);

/** A JSON Web Key Set: public keys only (a private or symmetric key is refused by the server). */
export const Jwks = z
  .object({ keys: z.array(z.record(z.string(), z.unknown())).min(1, 'must hold at least one key').max(JWKS_KEYS_MAX, `at most ${JWKS_KEYS_MAX} keys`) })
  .meta({ id: 'Jwks' });
export type Jwks = z.infer<typeof Jwks>;

const publisherFields = {
  /** An https URL, exactly as the tokens' `iss` writes it; github and gitlab default to their public issuer; jenkins and generic must name one. */
  issuer: IssuerUrl.optional(),
  /** What the ID token's `aud` must contain; default: the server's --repoadmin_oidc_audience. */
  audience: text(AUDIENCE_MAX).optional(),
  /** Claim name to an exact value or a `*` glob; must pin the repository or job (PINNING_CLAIMS). */
  claims: z.record(ClaimName, ClaimPattern).refine((c) => Object.keys(c).length <= CLAIMS_MAX, `at most ${CLAIMS_MAX} claims`),
  /** Globs of the branches it may publish to; default ["*"]. */
  branches: z.array(BranchPattern).min(1, 'must name at least one branch pattern').max(BRANCH_PATTERNS_MAX, `at most ${BRANCH_PATTERNS_MAX} patterns`).optional(),
  /** The environments its tokens may promote into (scope promote). */
  environments: z.array(EnvironmentName).max(ENVIRONMENTS_MAX, `at most ${ENVIRONMENTS_MAX} environments`).optional(),
  /** jenkins and generic: the claim that holds the ref (`refs/heads/B`, `refs/tags/T` or a branch name); default `ref`. */
  refClaim: ClaimName.optional(),
  /** The issuer's keys, for a server that cannot reach the issuer: no discovery then. */
  jwks: Jwks.optional(),
  description: z.string().max(PUBLISHER_DESCRIPTION_MAX, `at most ${PUBLISHER_DESCRIPTION_MAX} characters`).regex(NO_NUL, NO_NUL_MESSAGE).optional(),
};

export const TrustedPublisherCreateRequest = z
  .object({
    projectName: text(PROJECT_NAME_MAX),
    provider: Provider,
    ...publisherFields,
  })
  .meta({ id: 'TrustedPublisherCreateRequest' });
export type TrustedPublisherCreateRequest = z.output<typeof TrustedPublisherCreateRequest>;

/** A change: the fields given replace the stored ones; `environments`, `refClaim`, `jwks` and `description` may be null to remove them. */
export const TrustedPublisherUpdateRequest = z
  .object({
    issuer: publisherFields.issuer,
    audience: publisherFields.audience,
    claims: publisherFields.claims.optional(),
    branches: publisherFields.branches,
    environments: z.array(EnvironmentName).max(ENVIRONMENTS_MAX, `at most ${ENVIRONMENTS_MAX} environments`).nullable().optional(),
    refClaim: ClaimName.nullable().optional(),
    jwks: Jwks.nullable().optional(),
    description: z.string().max(PUBLISHER_DESCRIPTION_MAX, `at most ${PUBLISHER_DESCRIPTION_MAX} characters`).regex(NO_NUL, NO_NUL_MESSAGE).nullable().optional(),
  })
  .meta({ id: 'TrustedPublisherUpdateRequest' });
export type TrustedPublisherUpdateRequest = z.output<typeof TrustedPublisherUpdateRequest>;

export const TrustedPublisher = z
  .object({
    id: Uuid,
    projectName: z.string(),
    provider: Provider,
    issuer: z.string(),
    audience: z.string(),
    claims: z.record(z.string(), z.string()),
    branches: z.array(z.string()),
    environments: z.array(z.string()).nullable(),
    refClaim: z.string().nullable(),
    /** The inline key set (public keys), or null: the keys are discovered from the issuer. */
    jwks: Jwks.nullable(),
    description: z.string().nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'TrustedPublisher' });
export type TrustedPublisher = z.infer<typeof TrustedPublisher>;

export const TrustedPublisherList = z.object({ publishers: z.array(TrustedPublisher) }).meta({ id: 'TrustedPublisherList' });
export type TrustedPublisherList = z.infer<typeof TrustedPublisherList>;

export const TrustedPublisherListQuery = z.object({ projectName: text(PROJECT_NAME_MAX).optional() });
export const TrustedPublisherIdParams = z.object({ id: Uuid });

export const OidcExchangeRequest = z
  .object({
    /** The CI's ID token (a signed JWT, at most 16 KiB). */
    token: z.string().min(1, 'must not be empty').regex(NO_NUL, NO_NUL_MESSAGE),
    /** The project whose publishers to match; without it, exactly one project's publishers may match. */
    projectName: text(PROJECT_NAME_MAX).optional(),
  })
  .meta({ id: 'OidcExchangeRequest' });
export type OidcExchangeRequest = z.output<typeof OidcExchangeRequest>;

export const OidcExchanged = z
  .object({
    /** `rpa_...`: a project token, valid `expiresAt`, bound to the project and branch. */
    token: z.string(),
    tokenId: Uuid,
    expiresAt: Timestamp,
    projectName: z.string(),
    /** The branch of the ID token's ref; null for a tag build (it may publish to the branches the publisher allows). */
    branch: z.string().nullable(),
    scopes: z.array(z.enum(EXCHANGED_SCOPES)),
    publisherId: Uuid,
  })
  .meta({ id: 'OidcExchanged' });
export type OidcExchanged = z.infer<typeof OidcExchanged>;

export const OidcAudience = z.object({ audience: z.string() }).meta({ id: 'OidcAudience' });
export type OidcAudience = z.infer<typeof OidcAudience>;
