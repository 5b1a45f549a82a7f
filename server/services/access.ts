// What a caller may do: the role and scope rules and the "must change password" gate, applied to
// the user a credential resolved to.
import { AppError } from '../../common/errors.js';
import { type TokenScope, scopeAllows } from '../../common/schemas/tokens.js';
import type { Role } from '../../common/schemas/users.js';
import type { Actor } from './context.js';

export interface TokenRule {
  role?: Role;
  scope?: TokenScope;
  /** Lets a user who must change the password through, for this request. */
  mustChangeAllowed?: (actor: Actor) => boolean;
}

/** Throws the 401 or 403 a request with this actor gets under the rule. */
export function checkActor(actor: Actor | undefined, rule: TokenRule): asserts actor is Actor {
  if (!actor) throw new AppError('unauthorized', 'a bearer token is required: get one from POST /v1/authentication/generate-token');
  if (actor.mustChangePassword && !rule.mustChangeAllowed?.(actor)) {
    throw new AppError(
      'forbidden',
      `user ${actor.username} must change the initial password first: PUT /v1/users/${actor.userId}/password with {"password": "..."} (or: repoadmin user passwd)`,
    );
  }
  checkScope(actor, rule.scope);
  if (rule.role && actor.role !== rule.role) {
    throw new AppError('forbidden', `this needs the role ${rule.role}; user ${actor.username} has ${actor.role}`);
  }
}

/** A project token within its scope (`read` is within `publish`); no scope: project tokens are refused. */
function checkScope(actor: Actor, needed: TokenScope | undefined): void {
  const token = actor.projectToken;
  if (!token) return;
  if (!needed) {
    throw new AppError('forbidden', 'a project token cannot manage users, passwords or tokens: log in with a user name and password for that');
  }
  if (needed === 'publish' && !scopeAllows(token.scope, 'publish')) {
    throw new AppError('forbidden', `the project token "${token.name}" has the scope read: publishing needs a token with the scope publish`);
  }
  if (needed === 'delete' && !scopeAllows(token.scope, 'delete')) {
    throw new AppError('forbidden', `the project token "${token.name}" has the scope ${token.scope}: deleting needs a token with the scope delete`);
  }
}

