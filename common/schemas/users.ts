// Users: one per project, each with its own token; two roles.
import * as z from 'zod';
import { Timestamp, Uuid, text } from './common.js';

export const ROLES = ['ROLE_ADMIN', 'ROLE_USER'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

export const USERNAME_MAX = 100;
export const PROJECT_NAME_MAX = 100;
/** bcrypt reads at most 72 bytes; longer passwords are rejected, never truncated. */
export const PASSWORD_MIN_BYTES = 8;
export const PASSWORD_MAX_BYTES = 72;

/**
 * Whether two user ids name the same user: the one home of that comparison. Ids are UUIDs, whose
 * letters may come in either case (the Uuid schema lowers them; a path parameter before its
 * validation, a CLI operand or a stored login may not have been through it).
 */
export function sameUserId(a: string | null | undefined, b: string | null | undefined): boolean {
  return typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
}

export const Username = text(USERNAME_MAX).regex(/^[A-Za-z0-9._@-]+$/, 'only letters, digits and . _ @ -');
export const ProjectName = text(PROJECT_NAME_MAX);

/** The first administrator's documented password: it may never be set again. */
export const FIRST_PASSWORD = 'password';

/** bcrypt stops at a NUL (every run of NULs would match); no control character is typed on purpose. */
// eslint-disable-next-line no-control-regex -- refuses control characters, on purpose
const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f]*$/;

export const Password = z
  .string()
  .refine((p) => Buffer.byteLength(p, 'utf8') >= PASSWORD_MIN_BYTES, `at least ${PASSWORD_MIN_BYTES} bytes`)
  .refine((p) => Buffer.byteLength(p, 'utf8') <= PASSWORD_MAX_BYTES, `at most ${PASSWORD_MAX_BYTES} bytes`)
  .regex(NO_CONTROL, 'must not contain control characters');

/** A password that replaces another: the password rules, and never the documented first one. */
export const NewPassword = Password.refine((p) => p !== FIRST_PASSWORD, `must not be the documented first password "${FIRST_PASSWORD}"`);

/** Explains a password that breaks the rules of a new password, or returns null. */
export function passwordProblem(password: string): string | null {
  const result = NewPassword.safeParse(password);
  return result.success ? null : (result.error.issues[0]?.message ?? 'invalid');
}

export const UserCreateRequest = z
  .object({
    username: Username,
    password: Password,
    projectName: ProjectName,
    role: Role,
  })
  .meta({ id: 'UserCreateRequest' });
export type UserCreateRequest = z.infer<typeof UserCreateRequest>;

export const PasswordChangeRequest = z.object({ password: NewPassword }).meta({ id: 'PasswordChangeRequest' });
export type PasswordChangeRequest = z.infer<typeof PasswordChangeRequest>;

export const UserResult = z
  .object({
    userId: Uuid.nullable(),
    valid: z.boolean(),
    /** A fresh token, when users changed their own password (the old one is revoked). */
    token: z.string().optional(),
    expiresAt: Timestamp.optional(),
  })
  .meta({ id: 'UserResult' });
export type UserResult = z.infer<typeof UserResult>;

export const User = z
  .object({
    userId: Uuid,
    username: z.string(),
    projectName: z.string().nullable(),
    role: Role,
    createdAt: Timestamp,
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof User>;

export const UserList = z.object({ users: z.array(User) }).meta({ id: 'UserList' });
export type UserList = z.infer<typeof UserList>;

export const Me = z
  .object({
    userId: Uuid,
    username: z.string(),
    projectName: z.string().nullable(),
    role: Role,
    mustChangePassword: z.boolean(),
  })
  .meta({ id: 'Me' });
export type Me = z.infer<typeof Me>;

export const UserIdParams = z.object({ userId: Uuid });
