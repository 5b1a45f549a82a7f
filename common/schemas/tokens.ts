// Project tokens: long-lived, scoped credentials for pipelines, made by a user or an administrator.
import * as z from 'zod';
import { TokenRequest } from './auth.js';
import { PageInfo, Timestamp, Uuid, offsetDateTime, text } from './common.js';
import { PAGE_SIZE_MAX, wholeNumber } from './repositories.js';

/** Every project token starts with this, so that secret scanners can find leaked ones. */
export const TOKEN_PREFIX = 'rpa_';
/** Random bytes after the prefix (base64url). */
export const TOKEN_RANDOM_BYTES = 32;
export const TOKEN_NAME_MAX = 100;
/** The latest expiry a token may have, counted from its creation. */
export const TOKEN_MAX_LIFETIME_YEARS = 10;
/** Active (unexpired) tokens a user may have at once: a leaked session cannot mint them without end. */
export const TOKEN_MAX_ACTIVE = 100;
/**
 * A session token counts as a fresh login for this long after it was issued (its `iat`): making a
 * project token needs one, or the password, so a stolen older session cannot mint credentials.
 */
export const FRESH_LOGIN_SECONDS = 15 * 60;
/**
 * Tokens per page of `GET /v1/tokens` unless `size` says otherwise: the most a page may hold, so a
 * client that does not page (written before paging) still sees all of a user's active tokens.
 */
export const TOKEN_PAGE_SIZE_DEFAULT = PAGE_SIZE_MAX;

/**
 * `read`: search, get one, latest, who am I. `publish`: read, plus publishing. `delete`: publish,
 * plus deleting and restoring records. `promote`: read, plus promoting versions into environments
 * and vetoing them; no other scope includes it (a publishing pipeline cannot deploy).
 */
export const TOKEN_SCOPES = ['publish', 'read', 'delete', 'promote'] as const;
export const TokenScope = z.enum(TOKEN_SCOPES);
export type TokenScope = z.infer<typeof TokenScope>;

/** What each scope includes: the one home of the rule (the publish statement's check reads it too). */
const SCOPE_INCLUDES: Record<TokenScope, readonly TokenScope[]> = {
  read: ['read'],
  publish: ['publish', 'read'],
  delete: ['delete', 'publish', 'read'],
  promote: ['promote', 'read'],
};

/** Whether a token of scope `have` may do what needs scope `needed`. */
export function scopeAllows(have: TokenScope, needed: TokenScope): boolean {
  return SCOPE_INCLUDES[have].includes(needed);
}

/** The scopes that allow `needed`. */
export function scopesAllowing(needed: TokenScope): TokenScope[] {
  return TOKEN_SCOPES.filter((scope) => scopeAllows(scope, needed));
}

export function isProjectToken(token: string): boolean {
  return token.startsWith(TOKEN_PREFIX);
}

export const ProjectTokenCreateRequest = z
  .object({
    /** Unique per user, e.g. the pipeline's name. */
    name: text(TOKEN_NAME_MAX),
    scope: TokenScope,
    /** A date-time with an offset, in the future and at most 10 years away; null or absent: no expiry. */
    expiresAt: offsetDateTime('must be an ISO 8601 date-time with an offset, e.g. 2027-01-31T00:00:00Z')
      .nullable()
      .optional()
      .meta({ format: 'date-time', example: '2027-01-31T00:00:00.000Z' }),
    /** The token's user (administrators only); default: the caller. */
    userId: Uuid.optional(),
    /**
     * The caller's own password, needed when its session token was issued more than 15 minutes
     * ago; checked as a login is, and counted by the same limits.
     */
    password: TokenRequest.shape.password.optional(),
  })
  .meta({ id: 'ProjectTokenCreateRequest' });
export type ProjectTokenCreateRequest = z.output<typeof ProjectTokenCreateRequest>;

const tokenFields = {
  id: Uuid,
  name: z.string(),
  scope: TokenScope,
  userId: Uuid,
  username: z.string(),
  projectName: z.string().nullable(),
  createdAt: Timestamp,
  /** null: never expires. */
  expiresAt: Timestamp.nullable(),
};

export const ProjectTokenCreated = z
  .object({
    ...tokenFields,
    /** `rpa_` and 43 base64url characters. Shown only in this answer: the server keeps a SHA-256 hash. */
    token: z.string().meta({ example: 'rpa_3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }),
  })
  .meta({ id: 'ProjectTokenCreated' });
export type ProjectTokenCreated = z.infer<typeof ProjectTokenCreated>;

export const ProjectToken = z
  .object({
    ...tokenFields,
    /** Written at most once a minute; null: never used. */
    lastUsedAt: Timestamp.nullable(),
    /** `oidc`: made by an ID token exchange (POST /v1/authentication/oidc); absent from servers before trusted publishing. */
    kind: z.enum(['ordinary', 'oidc']).optional(),
    /** An oidc token's branch (null for a tag build, and for ordinary tokens). */
    branch: z.string().nullable().optional(),
    /** The trusted publisher that made an oidc token. */
    publisherId: Uuid.nullable().optional(),
  })
  .meta({ id: 'ProjectToken' });
export type ProjectToken = z.infer<typeof ProjectToken>;

export const ProjectTokenList = z
  .object({
    /** By user name, then token name. */
    tokens: z.array(ProjectToken),
    page: PageInfo,
  })
  .meta({ id: 'ProjectTokenList' });
export type ProjectTokenList = z.infer<typeof ProjectTokenList>;

/** Read as the search's paging is: decimal digits only (`0x10`, `1e3` and blanks are refused). */
const pageNumber = (name: string, max: number, fallback: number, description: string) =>
  wholeNumber(name)
    .pipe(z.number().min(1, 'must be 1 or more').max(max, `at most ${max}`).default(fallback))
    // What the document says of it: the digits are read before these limits apply.
    .meta({ type: 'integer', minimum: 1, maximum: max, description: `${description}; default ${fallback}` });

export const ProjectTokenListQuery = z.object({
  /** Only this user's tokens (administrators: anyone's). */
  userId: Uuid.optional(),
  page: pageNumber('page', 1_000_000_000, 1, 'page number, from 1'),
  size: pageNumber('size', PAGE_SIZE_MAX, TOKEN_PAGE_SIZE_DEFAULT, `tokens per page, 1 to ${PAGE_SIZE_MAX}`),
});
export type ProjectTokenListQuery = z.output<typeof ProjectTokenListQuery>;

export const ProjectTokenIdParams = z.object({ id: Uuid });

/** `DELETE /v1/tokens?userId=`: all of one user's tokens (its own, or an administrator's call for anyone). */
export const ProjectTokenRevokeAllQuery = z.object({ userId: Uuid });

export const ProjectTokensRevoked = z
  .object({
    /** How many tokens were revoked (0 when the user had none). */
    revoked: z.number().int(),
  })
  .meta({ id: 'ProjectTokensRevoked' });
export type ProjectTokensRevoked = z.infer<typeof ProjectTokensRevoked>;
