// The users table.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { Role } from '../../common/schemas/users.js';
import { type Db, dialectOf } from './dialects/index.js';
import { isUniqueViolation, toDate, toNumber } from './rows.js';
import { cachedRows } from './statements.js';

export interface UserRow {
  userId: string;
  username: string;
  passwordHash: string;
  projectName: string | null;
  role: Role;
  mustChangePassword: boolean;
  tokenVersion: number;
  createdAt: Date;
}

const COLUMNS = [
  'id',
  'username',
  'password_hash',
  'project_name',
  'role',
  'must_change_password',
  'token_version',
  'created_at',
];

function toUser(row: Record<string, unknown>): UserRow {
  return {
    userId: String(row.id),
    username: String(row.username),
    passwordHash: String(row.password_hash),
    projectName: (row.project_name as string | null) ?? null,
    role: row.role as Role,
    mustChangePassword: Boolean(row.must_change_password),
    tokenVersion: toNumber(row.token_version),
    createdAt: toDate(row.created_at),
  };
}

export async function findUserById(db: Db, userId: string): Promise<UserRow | undefined> {
  const [row] = await cachedRows(db, 'user-by-id', [userId], () => `select ${COLUMNS.join(', ')} from users where id = ? limit 1`);
  return row ? toUser(row) : undefined;
}

export async function findUserByName(db: Db, username: string): Promise<UserRow | undefined> {
  const row = await db('users').select(COLUMNS).where({ username }).first();
  return row ? toUser(row) : undefined;
}

export async function listUsers(db: Db): Promise<UserRow[]> {
  const rows = await db('users').select(COLUMNS).orderBy([{ column: 'username' }]);
  return rows.map(toUser);
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db('users').count({ n: '*' }).first();
  return toNumber(row?.n);
}

export interface NewUser {
  userId?: string;
  username: string;
  passwordHash: string;
  projectName: string | null;
  role: Role;
  mustChangePassword?: boolean;
}

export async function insertUser(db: Db, user: NewUser): Promise<string> {
  const userId = user.userId ?? randomUUID();
  try {
    await db('users').insert({
      id: userId,
      username: user.username,
      password_hash: user.passwordHash,
      project_name: user.projectName,
      role: user.role,
      must_change_password: user.mustChangePassword ?? false,
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError('conflict', `the user name "${user.username}" is already taken`, { cause: error });
    }
    throw error;
  }
  return userId;
}

/** Inserts the user unless one with its id exists; true when inserted. */
export function insertUserIfAbsent(db: Db, user: NewUser & { userId: string }): Promise<boolean> {
  return dialectOf(db).insertIfAbsent(db, 'users', {
    id: user.userId,
    username: user.username,
    password_hash: user.passwordHash,
    project_name: user.projectName,
    role: user.role,
    must_change_password: user.mustChangePassword ?? false,
  });
}

/** Sets a new password, clears "must change" and revokes earlier tokens. Returns the new token version. */
export async function updatePassword(db: Db, userId: string, passwordHash: string): Promise<number> {
  const version = await dialectOf(db).updateAndRead(
    db,
    'users',
    { id: userId },
    { password_hash: passwordHash, must_change_password: false, token_version: db.raw('token_version + 1'), updated_at: db.fn.now(3) },
    'token_version',
  );
  if (version === undefined) throw new AppError('not_found', `no user with id ${userId}`);
  return toNumber(version);
}

export async function deleteUserRow(db: Db, userId: string): Promise<void> {
  await db('users').where({ id: userId }).delete();
}

/**
 * The user, its row locked until the transaction ends: a token being made for it (whose foreign key
 * check waits on this lock) is then either seen by the rest of the transaction or refused after it.
 */
export async function lockUser(db: Knex.Transaction, userId: string): Promise<UserRow | undefined> {
  const row = await db('users').select(COLUMNS).where({ id: userId }).forUpdate().first();
  return row ? toUser(row) : undefined;
}

/** Locks every administrator row, so concurrent deletions cannot remove the last one. */
export async function lockAdminIds(db: Knex.Transaction): Promise<string[]> {
  const rows = await db('users').select('id').where({ role: 'ROLE_ADMIN' }).forUpdate();
  return rows.map((r: { id: string }) => String(r.id));
}
