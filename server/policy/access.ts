// Who may do what, in one place: the role and scope rules and the "must change password" gate,
// applied to the user a credential resolved to (checkActor), and the rules of what a request names
// (OWNER_RULES: a record's project, a user, an environment, the event feed). The pipeline applies
// both before the handler; the services do no permission checks. The publish statement carries the
// same rules as SQL (server/policy/publish.ts).
import { AppError } from '../../common/errors.js';
import { FRESH_LOGIN_SECONDS, type TokenScope, scopeAllows, scopesAllowing } from '../../common/schemas/tokens.js';
import { type Role, sameUserId } from '../../common/schemas/users.js';
import type { Access, Owner, OwnerRule, Subject } from '../http/endpoint.js';
import type { Actor } from '../services/context.js';

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
  if (!scopeAllows(token.scope, needed) && !(needed === 'promote' && token.promoteEnvironments !== undefined)) {
    throw new AppError('forbidden', `the project token "${token.name}" has the scope ${token.scope}: ${purpose} needs a token with the scope ${needed}`);
  }
}

const isAdmin = (actor: Actor) => actor.role === 'ROLE_ADMIN';

/** Who may call an endpoint, in words, from its declaration's `access` (docs/api.md, "Who may call what"). */
export function describeAccess(access: Access): string {
  if (access === 'public') return 'anyone; no token is read';
  if (access === 'reader') return 'anyone (any valid token where search is not public)';
  const who = access.role === 'ROLE_ADMIN' ? 'administrators' : access.role ? `users of role ${access.role}` : 'users';
  const tokens = access.scope ? `project tokens with a scope including ${access.scope} (${scopesAllowing(access.scope).join(', ')})` : 'no project token';
  const mustChange = access.allowWhileMustChange ? '; also before the first password is changed' : '';
  const owner = access.owner ? `; ${OWNER_RULES[access.owner.rule].allows}` : '';
  return `${who}; ${tokens}${owner}${mustChange}`;
}

const forbidden = (message: string) => new AppError('forbidden', message);

/**
 * The rules of what a request names, each with what it allows and what a refusal under it is, and
 * its decision: given the actor the endpoint let in and what the endpoint's `subject` found, the
 * project or user the handler acts for (undefined: every one, for an administrator who named none),
 * or the 403 that says why not. An endpoint's declaration names its rule (`access.owner`); the
 * pipeline decides before the handler (server/http/pipeline.ts), and the API description and
 * docs/api.md's table say the rule from the same entry.
 */
export const OWNER_RULES: Record<OwnerRule, { allows: string; refused: string; decide: (actor: Actor, subject: Subject, owner: Owner) => string | undefined }> = {
  // `doing` ends before the project: "delete only records of", "publish only to". As SQL: OWN_PROJECT_SQL.
  project: {
    allows: 'their own project only (administrators: any)',
    refused: "another project's record (not an administrator)",
    decide: (actor, { projectName }, { doing }) => {
      if (isAdmin(actor)) return projectName;
      if (projectName !== undefined && projectName !== actor.projectName) {
        throw forbidden(`user ${actor.username} may ${doing} project "${actor.projectName ?? ''}", not "${projectName}"`);
      }
      return actor.projectName ?? '';
    },
  },
  self: {
    allows: "their own only (administrators: anyone's)",
    refused: 'another user (not an administrator)',
    decide: (actor, { userId }, { doing, everyone }) => {
      if (userId === undefined) return everyone && isAdmin(actor) ? undefined : actor.userId;
      if (sameUserId(userId, actor.userId)) return actor.userId;
      if (!isAdmin(actor)) throw forbidden(`only administrators may ${doing} other users`);
      return userId;
    },
  },
  environment: {
    allows: 'their own project; a protected environment only administrators and exchanged tokens whose publisher lists it',
    refused: 'another project, or an environment the caller may not promote into (a protected one, or one an exchanged token does not list)',
    decide: (actor, { projectName, environment }) => {
      checkPromote(actor, projectName!, environment!);
      return projectName;
    },
  },
  events: {
    allows: "administrators all; project tokens their project's",
    refused: 'a user who is not an administrator (others read events through a project token of their project)',
    decide: (actor) => {
      if (isAdmin(actor)) return undefined;
      if (!actor.projectToken || actor.projectName === null) {
        throw forbidden('events are for administrators and project tokens (scope read or publish) of their project');
      }
      return actor.projectName;
    },
  },
};

/**
 * The rules as SQL, for a statement that checks its credential where it writes (the publish,
 * server/policy/publish.ts), over the credential's row `u` of users: the must-change gate, and the
 * `project` rule, whose one value is the project.
 */
export const MAY_ACT_SQL = 'not u.must_change_password';
export const OWN_PROJECT_SQL = "(u.role = 'ROLE_ADMIN' or u.project_name = ?)";

/**
 * The owner rule's decision for a request (OWNER_RULES): what the handler may act for, or the 403
 * of a refusal; a rule that hides what it refuses answers its 404 instead.
 */
export function decideOwner(owner: Owner, actor: Actor, subject: Subject, params: Record<string, string>): string | undefined {
  try {
    return OWNER_RULES[owner.rule].decide(actor, subject, owner);
  } catch (refused) {
    if (owner.hiddenAs) throw new AppError('not_found', owner.hiddenAs(params));
    throw refused;
  }
}

const sentence = (parts: string[]) =>
  parts.length === 0 ? '' : (parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')}, or ${parts.at(-1)!}`).replace(/^./, (c) => c.toUpperCase());

/**
 * The 401 and 403 answers an endpoint gives under its rule, as the API description states them:
 * derived from the declaration, never written per endpoint.
 */
export function refusals(access: Access): { 401?: string; 403?: string } {
  if (access === 'public') return {};
  if (access === 'reader') return { 401: 'No valid token, on a server whose search is not public' };
  const unauthorized = access.freshLogin
    ? `No valid token; or the session token is older than ${FRESH_LOGIN_SECONDS / 60} minutes and no password, or a wrong one, was sent (\`reason: fresh_login_required\`)`
    : 'No valid token';
  const forbidden = [
    ...(access.role === 'ROLE_ADMIN' ? ['not an administrator'] : access.role ? [`not of the role ${access.role}`] : []),
    access.scope ? `a project token without the scope ${access.scope}` : 'a project token',
    ...(access.owner ? [OWNER_RULES[access.owner.rule].refused] : []),
    ...(access.allowWhileMustChange ? [] : ['a user who must change the initial password first']),
  ];
  return { 401: unauthorized, 403: sentence(forbidden) };
}

/** Whether the actor is an administrator acting through a login (not through a project token). */
const adminLogin = (actor: Actor) => actor.role === 'ROLE_ADMIN' && !actor.projectToken;

/** A user of the project, or a token of one: administrators (and their tokens) act for every project. */
function checkProject(actor: Actor, projectName: string, doing: string): void {
  if (actor.role === 'ROLE_ADMIN' || actor.projectName === projectName) return;
  throw new AppError('forbidden', `user ${actor.username} may ${doing} only in project "${actor.projectName ?? ''}", not "${projectName}"`);
}

/**
 * Who may promote a record of `projectName` into `environment`, once the endpoint let the actor in
 * (a login, or a project token that may promote); docs/api.md, "Environments and promotion":
 * - administrators, into every environment;
 * - users of the project (ROLE_USER of it) and its tokens of the scope `promote`, into environments
 *   that are not protected;
 * - a token exchanged through a trusted publisher that lists environments: into those only,
 *   protected ones included.
 */
export function checkPromote(actor: Actor, projectName: string, environment: { name: string; protected: boolean }): void {
  checkProject(actor, projectName, 'promote');
  if (adminLogin(actor)) return;
  const listed = actor.projectToken?.promoteEnvironments;
  if (listed !== undefined) {
    if (listed.includes(environment.name)) return;
    throw new AppError(
      'forbidden',
      `the project token "${actor.projectToken!.name}" may promote only into ${listed.length ? listed.join(', ') : 'no environment'}, not ${environment.name}`,
    );
  }
  if (environment.protected) {
    throw new AppError(
      'forbidden',
      `environment ${environment.name} is protected: only administrators, and project tokens whose trusted publisher lists ${environment.name}, promote into it`,
    );
  }
}

