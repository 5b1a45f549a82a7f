// What a caller may do: the role and scope rules and the "must change password" gate, applied to
// the user a credential resolved to.
import { AppError } from '../../common/errors.js';
import { type TokenScope, scopeAllows } from '../../common/schemas/tokens.js';
import type { Role } from '../../common/schemas/users.js';
import type { Actor } from './context.js';

/** What a project token cannot do on the user and token endpoints: they take a login. */
export const ACCOUNTS = 'manage users, passwords or tokens';

export interface TokenRule {
  role?: Role;
  scope?: TokenScope;
  /**
   * What is refused to a project token, as its refusal names it: with a scope, the work that needs
   * it ("restoring from the trash" needs a token with the scope delete); without, what a project
   * token cannot do at all (a project token cannot "manage webhooks").
   */
  purpose: string;
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
  checkScope(actor, rule);
  if (rule.role && actor.role !== rule.role) {
    throw new AppError('forbidden', `this needs the role ${rule.role}; user ${actor.username} has ${actor.role}`);
  }
}

/** A project token within its scope (`read` is within `publish`); no scope: project tokens are refused. */
function checkScope(actor: Actor, { scope: needed, purpose }: TokenRule): void {
  const token = actor.projectToken;
  if (!token) return;
  if (!needed) throw new AppError('forbidden', `a project token cannot ${purpose}: log in with a user name and password for that`);
  if (!scopeAllows(token.scope, needed)) {
    throw new AppError('forbidden', `the project token "${token.name}" has the scope ${token.scope}: ${purpose} needs a token with the scope ${needed}`);
  }
}
