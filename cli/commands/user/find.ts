// Finding the user a `user passwd` or `user delete` operand names: a userId or a user name.
import { AppError } from '../../../common/errors.js';
import { type User, sameUserId } from '../../../common/schemas/users.js';
import type { Deps } from '../../deps.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUserId(value: string): boolean {
  return UUID.test(value);
}

/** The user with this id or name, from the user list (administrators only); not_found otherwise. */
export async function findUser(deps: Pick<Deps, 'api'>, nameOrId: string): Promise<User> {
  const { users } = await deps.api.listUsers();
  const user = isUserId(nameOrId)
    ? users.find((u) => sameUserId(u.userId, nameOrId))
    : users.find((u) => u.username === nameOrId);
  if (!user) throw new AppError('not_found', `no user ${isUserId(nameOrId) ? 'with id' : 'named'} ${nameOrId}: see repoadmin user list`);
  return user;
}
