// Users: create, change a password, delete, list, and the first administrator.
import { AppError } from '../../common/errors.js';
import { formatTimestamp } from '../../common/dates.js';
import type { Me, User, UserCreateRequest, UserResult } from '../../common/schemas/users.js';
import { issueToken } from '../auth/tokens.js';
import {
  countUsers,
  deleteUserRow,
  findUserById,
  insertUser,
  insertUserIfAbsent,
  listUsers as listUserRows,
  lockAdminIds,
  updatePassword,
} from '../db/users.js';
import type { Actor, Services } from './context.js';
import { retireTokensOfUser } from './tokens.js';

/** The id older documentation and scripts use for the first administrator. */
export const DEFAULT_ADMIN_ID = '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd';
export const DEFAULT_ADMIN_NAME = 'admin';
export const DEFAULT_ADMIN_PASSWORD = 'password';

/** Creates `admin` when there are no users at all. True when it was created now. */
export async function ensureDefaultAdmin(
  s: Pick<Services, 'db' | 'config' | 'passwords'>,
): Promise<{ created: boolean; mustChangePassword: boolean }> {
  if ((await countUsers(s.db)) > 0) return { created: false, mustChangePassword: false };
  const mustChangePassword = s.config.adminPassword === undefined;
  const created = await insertUserIfAbsent(s.db, {
    userId: DEFAULT_ADMIN_ID,
    username: DEFAULT_ADMIN_NAME,
    passwordHash: await s.passwords.hash(s.config.adminPassword ?? DEFAULT_ADMIN_PASSWORD),
    projectName: null,
    role: 'ROLE_ADMIN',
    mustChangePassword,
  });
  return { created, mustChangePassword: created && mustChangePassword };
}

export async function createUser(s: Services, request: UserCreateRequest): Promise<UserResult> {
  const userId = await insertUser(s.db, {
    username: request.username,
    passwordHash: await s.passwords.hash(request.password),
    projectName: request.projectName,
    role: request.role,
  });
  return { userId, valid: true };
}

export async function changePassword(s: Services, actor: Actor, userId: string, password: string): Promise<UserResult> {
  const own = actor.userId === userId;
  if (!own && actor.role !== 'ROLE_ADMIN') {
    throw new AppError('forbidden', 'you may change only your own password');
  }
  const target = await findUserById(s.db, userId);
  if (!target) throw new AppError('not_found', `no user with id ${userId}`);
  const tokenVersion = await updatePassword(s.db, userId, await s.passwords.hash(password));
  if (!own) return { userId, valid: true };
  const { token, expiresAt } = issueToken(s.tokens, { ...target, tokenVersion }, s.now());
  return { userId, valid: true, token, expiresAt: formatTimestamp(expiresAt) };
}

export async function deleteUser(s: Services, userId: string): Promise<void> {
  await s.db.transaction(async (trx) => {
    const admins = await lockAdminIds(trx);
    const target = await findUserById(trx, userId);
    if (!target) throw new AppError('not_found', `no user with id ${userId}`);
    if (target.role === 'ROLE_ADMIN' && admins.length <= 1) {
      throw new AppError('conflict', 'the last administrator cannot be deleted: create another administrator first');
    }
    await retireTokensOfUser(trx, userId, s.now());
    await deleteUserRow(trx, userId);
  });
}

export async function listUsers(s: Services): Promise<User[]> {
  const rows = await listUserRows(s.db);
  return rows.map((u) => ({
    userId: u.userId,
    username: u.username,
    projectName: u.projectName,
    role: u.role,
    createdAt: formatTimestamp(u.createdAt),
  }));
}

export function me(actor: Actor): Me {
  const { userId, username, projectName, role, mustChangePassword } = actor;
  return { userId, username, projectName, role, mustChangePassword };
}
