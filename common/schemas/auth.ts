// generate-token: credentials in, a bearer token out.
import * as z from 'zod';
import { NO_NUL, NO_NUL_MESSAGE, Timestamp, Uuid } from './common.js';
import { ProjectName, Role } from './users.js';

export const TokenRequest = z
  .object({
    username: z.string().min(1, 'must not be empty').max(100, 'at most 100 characters').regex(NO_NUL, NO_NUL_MESSAGE),
    /** Checked against the stored hash only; the password rules apply when one is set. */
    password: z.string().min(1, 'must not be empty').max(1024, 'at most 1024 characters').regex(NO_NUL, NO_NUL_MESSAGE),
  })
  .meta({ id: 'TokenRequest' });
export type TokenRequest = z.infer<typeof TokenRequest>;

export const TokenResponse = z
  .object({
    /** Bearer token (JWT, HS256). */
    token: z.string(),
    userId: Uuid,
    expiresAt: Timestamp,
    username: z.string(),
    role: Role,
    projectName: ProjectName.nullable(),
    /** While true the token is good only for changing this user's own password. */
    mustChangePassword: z.boolean(),
  })
  .meta({ id: 'TokenResponse' });
export type TokenResponse = z.infer<typeof TokenResponse>;

/** The claims of our session tokens (docs/api.md, "Session tokens (JWT)"). Not part of the OpenAPI document. */
export const TokenClaims = z.object({
  /** The user name. */
  sub: z.string(),
  scopes: z.array(z.object({ authority: z.string() })),
  iss: z.string(),
  iat: z.number(),
  exp: z.number(),
  /** The user id. */
  uid: Uuid,
  /** The user's token version: a password change raises it, and older tokens stop working. */
  tv: z.int(),
});
export type TokenClaims = z.infer<typeof TokenClaims>;
