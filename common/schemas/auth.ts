// generate-token: credentials in, a bearer token out.
import { z } from 'zod';
import { NO_NUL, NO_NUL_MESSAGE, Timestamp, Uuid } from './common.js';
import { ProjectName, Role } from './users.js';

export const TokenRequest = z
  .object({
    username: z.string().min(1, 'must not be empty').max(100, 'at most 100 characters').regex(NO_NUL, NO_NUL_MESSAGE),
    /** Checked against the stored hash only; the password rules apply when one is set. */
    password: z.string().min(1, 'must not be empty').max(1024, 'at most 1024 characters'),
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

/** The claims of our session tokens (docs/api.md, "Session tokens (JWT)"). */
export interface TokenClaims {
  sub: string;
  scopes: { authority: string }[];
  iss: string;
  iat: number;
  exp: number;
  uid: string;
  tv: number;
}
