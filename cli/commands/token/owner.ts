// Whose project tokens a `token` command is about: the caller by default, or the user of --user
// (a user name or userId; other users' need an administrator).
import { sameUserId } from '../../../common/schemas/users.js';
import type { Deps } from '../../deps.js';
import { findUser, isUserId } from '../user/find.js';

export interface TokenOwner {
  userId: string;
  username: string;
  /** The user name of the caller, who may be another user (an administrator). */
  caller: string;
}

export async function tokenOwner(deps: Pick<Deps, 'api'>, user: string | undefined): Promise<TokenOwner> {
  const me = await deps.api.me();
  if (!user || user === me.username || (isUserId(user) && sameUserId(user, me.userId))) {
    return { userId: me.userId, username: me.username, caller: me.username };
  }
  const found = await findUser(deps, user);
  return { userId: found.userId, username: found.username, caller: me.username };
}
