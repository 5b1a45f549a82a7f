// Who may publish to which project with which credential: the one home of the rule. It comes in
// two forms made here side by side: the SQL precondition the publish statement carries (the
// database checks the credential where it writes, so a publish is one round trip), and the
// TypeScript check of a resolved user, which says why a refused publish was refused.
//
// The rule: the credential still holds (a session token's user exists under its name with the
// token's version; a project token is known and not expired), a project token has a scope that
// allows publishing (publish or delete), the user need not change the initial password, and the user is an administrator or
// belongs to the record's project. A project token's use is recorded when due (at most once a
// minute), with the publish, whether or not the publish may go ahead.
import { AppError } from '../../common/errors.js';
import { scopesAllowing } from '../../common/schemas/tokens.js';
import type { BoundSql, Precondition } from '../db/dialects/index.js';
import { touchTokenSql } from '../db/tokens.js';
import { checkActor } from '../services/access.js';
import type { SignedCredential } from '../services/context.js';
import { actorFromSession } from '../services/auth.js';
import type { Actor, Services } from '../services/context.js';
import { actorFromProjectTokenHash, lastUseDueBefore } from '../services/tokens.js';

const ADMIN = 'ROLE_ADMIN';

/** The user part of the rule, for the row `u` of users; its one value is the record's project. */
const USER_MAY_PUBLISH = `not u.must_change_password and (u.role = '${ADMIN}' or u.project_name = ?)`;

const CHECKS: Record<SignedCredential['kind'], string> = {
  session: `select 1 from users u where u.id = ? and u.username = ? and u.token_version = ? and ${USER_MAY_PUBLISH}`,
  project: `select 1 from tokens t join users u on u.id = t.user_id
          where t.token_hash = ? and t.scope in (${scopesAllowing('publish').map((scope) => `'${scope}'`).join(', ')}) and (t.expires_at is null or t.expires_at > ?) and ${USER_MAY_PUBLISH}`,
};

/** The rule as SQL: a row when the credential may publish to `projectName` at `now`. */
export function publishPrecondition(credential: SignedCredential, projectName: string, now: Date): Precondition {
  if (credential.kind === 'session') {
    const check: BoundSql = { sql: CHECKS.session, values: [credential.userId, credential.username, credential.tokenVersion, projectName] };
    return { shape: 'session', check };
  }
  return {
    shape: 'project',
    check: { sql: CHECKS.project, values: [credential.tokenHash, now, projectName] },
    alongside: touchTokenSql({ tokenHash: credential.tokenHash }, now, lastUseDueBefore(now)),
  };
}

/**
 * The rule for a resolved user, in the order the auth path reports problems: the password to
 * change and a project token's scope (the access rule of every endpoint, services/access.ts), then
 * the project. Throws the 403 that says which.
 */
export function checkMayPublish(actor: Actor, projectName: string): void {
  checkActor(actor, { scope: 'publish', purpose: 'publishing' });
  if (actor.role !== ADMIN && actor.projectName !== projectName) {
    throw new AppError('forbidden', `user ${actor.username} may publish only to project "${actor.projectName ?? ''}", not "${projectName}"`);
  }
}

/**
 * Says why a credential the precondition refused may not publish to `projectName`: resolves it as
 * the auth path does (a 401 when it no longer holds), then checks the rule (a 403). Returns only
 * when the credential may publish after all (it changed meanwhile).
 */
export async function explainRefusal(services: Services, credential: SignedCredential, projectName: string): Promise<void> {
  const actor = credential.kind === 'session' ? await actorFromSession(services, credential) : await actorFromProjectTokenHash(services, credential.tokenHash);
  checkMayPublish(actor, projectName);
}
