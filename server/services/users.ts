// Users: create, change a password, delete, list, and the first administrator.
import { AppError } from '../../common/errors.js';
import { formatTimestamp } from '../../common/dates.js';
import { FIRST_PASSWORD, type Me, type User, type UserCreateRequest, type UserResult, sameUserId } from '../../common/schemas/users.js';
import { issueToken } from '../auth/tokens.js';
import {
  countUsers,
  deleteUserRow,
  findUserById,
  insertUser,
  insertUserIfAbsent,
  listUsers as listUserRows,
  lockAdminIds,
  lockUser,
  updatePassword,
} from '../db/users.js';
import { retryConflicts } from '../db/faults.js';
import type { Actor, Services } from './context.js';
import { retireTokensOfUser } from './tokens.js';

/** The id older documentation and scripts use for the first administrator. */
export const DEFAULT_ADMIN_ID = '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd';
export const DEFAULT_ADMIN_NAME = 'admin';
export const DEFAULT_ADMIN_PASSWORD = FIRST_PASSWORD;

/** Creates `admin` when there are no users at all. True when it was created now. */
export async function ensureDefaultAdmin(
  services: Pick<Services, 'db' | 'config' | 'passwords'>,
): Promise<{ created: boolean; mustChangePassword: boolean }> {
  if ((await countUsers(services.db)) > 0) return { created: false, mustChangePassword: false };
  if (services.config.requireAdminPassword && services.config.adminPassword === undefined) {
    throw new AppError(
      'usage',
      'first start: set REPO_MAN_ADMIN_PASSWORD (or REPO_MAN_ADMIN_PASSWORD_FILE, a file holding it) to the first password of the administrator "admin"; REPO_MAN_REQUIRE_ADMIN_PASSWORD is true (as in the image), so the documented one is not used',
    );
  }
  const mustChangePassword = services.config.adminPassword === undefined;
  const created = await insertUserIfAbsent(services.db, {
    userId: DEFAULT_ADMIN_ID,
    username: DEFAULT_ADMIN_NAME,
    passwordHash: await services.passwords.hash(services.config.adminPassword ?? DEFAULT_ADMIN_PASSWORD),
    projectName: null,
    role: 'ROLE_ADMIN',
    mustChangePassword,
  });
  return { created, mustChangePassword: created && mustChangePassword };
}

export async function createUser(services: Services, request: UserCreateRequest): Promise<UserResult> {
  const userId = await insertUser(services.db, {
    username: request.username,
    passwordHash: await services.passwords.hash(request.password),
    projectName: request.projectName,
    role: request.role,
  });
  return { userId, valid: true };
}

export async function changePassword(services: Services, actor: Actor, userId: string, password: string): Promise<UserResult> {
  const own = sameUserId(actor.userId, userId);
  const target = await findUserById(services.db, userId);
  if (!target) throw new AppError('not_found', `no user with id ${userId}`);
  const tokenVersion = await updatePassword(services.db, userId, await services.passwords.hash(password));
  if (!own) return { userId, valid: true };
  const { token, expiresAt } = issueToken(services.tokens, { ...target, tokenVersion }, services.now());
  return { userId, valid: true, token, expiresAt: formatTimestamp(expiresAt) };
}

export async function deleteUser(services: Services, userId: string): Promise<void> {
  await retryConflicts(() =>
    services.db.transaction(async (trx) => {
      const admins = await lockAdminIds(trx);
      const target = await lockUser(trx, userId);
      if (!target) throw new AppError('not_found', `no user with id ${userId}`);
      if (target.role === 'ROLE_ADMIN' && admins.length <= 1) {
        throw new AppError('conflict', 'the last administrator cannot be deleted: create another administrator first');
      }
      await retireTokensOfUser(trx, userId, services.now());
      await deleteUserRow(trx, userId);
    }),
  );
}

export async function listUsers(services: Services): Promise<User[]> {
  const rows = await listUserRows(services.db);
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
