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
//
// A project token made by an ID token exchange (docs/api.md, "Trusted publishing") is refused by the
// ordinary precondition: its publish first passes `checkOidcPublish` (the branch it is bound to, the
// repository it was built from), then carries the precondition of its own shape and the provenance
// the token keeps.
import { AppError } from '../../common/errors.js';
import { scopesAllowing } from '../../common/schemas/tokens.js';
import type { BoundSql, Precondition } from '../db/dialects/index.js';
import { type OidcBinding, touchTokenSql } from '../db/tokens.js';
import { globMatches } from '../../common/glob.js';
import { MAY_ACT_SQL, OWN_PROJECT_SQL, checkActor, decideOwner } from './access.js';
import type { Owner } from '../http/endpoint.js';
import type { SignedCredential } from '../services/context.js';
import { actorFromSession } from '../services/auth.js';
import type { Actor, Services } from '../services/context.js';
import { actorFromProjectTokenHash, lastUseDueBefore } from '../services/tokens.js';

/** The publish endpoint's rule of what it names: the record's project (server/policy/access.ts). */
export const PUBLISH_OWNER: Owner = { rule: 'project', doing: 'publish only to' };

/** The user part of the rule, for the row `u` of users; its one value is the record's project. */
const USER_MAY_PUBLISH = `${MAY_ACT_SQL} and ${OWN_PROJECT_SQL}`;

/** What a check's row says of the credential's user (Precondition.check): the audit entry's actor. */
const NAMES_USER = 'u.id as user_id, u.username as username';

const CHECKS: Record<SignedCredential['kind'], string> = {
  session: `select ${NAMES_USER}, null as token_id from users u where u.id = ? and u.username = ? and u.token_version = ? and ${USER_MAY_PUBLISH}`,
  project: `select ${NAMES_USER}, t.id as token_id from tokens t join users u on u.id = t.user_id
          where t.token_hash = ? and t.kind = 'ordinary' and t.scope in (${scopesAllowing('publish').map((scope) => `'${scope}'`).join(', ')}) and (t.expires_at is null or t.expires_at > ?) and ${USER_MAY_PUBLISH}`,
};

/** An oidc token: known, not expired, within its scope, its user (the project's pipeline user) of the project. */
const OIDC_CHECK = `select ${NAMES_USER}, t.id as token_id from tokens t join users u on u.id = t.user_id
          where t.token_hash = ? and t.kind = 'oidc' and t.scope in (${scopesAllowing('publish').map((scope) => `'${scope}'`).join(', ')}) and t.expires_at > ? and ${USER_MAY_PUBLISH}`;

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

/** The rule as SQL for a token made by an ID token exchange, once checkOidcPublish let its publish through. */
export function oidcPublishPrecondition(tokenHash: string, projectName: string, now: Date): Precondition {
  return {
    shape: 'oidc',
    check: { sql: OIDC_CHECK, values: [tokenHash, now, projectName] },
    alongside: touchTokenSql({ tokenHash }, now, lastUseDueBefore(now)),
  };
}

/** A repository address as compared: case, a `.git` suffix and a trailing slash ignored. */
export function sameRepository(a: string, b: string): boolean {
  const plain = (url: string) => url.trim().toLowerCase().replace(/\/+$/, '').replace(/\.git$/, '').replace(/\/+$/, '');
  return plain(a) === plain(b);
}

/**
 * What a token made by an ID token exchange may publish: to the branch of its ID token's ref only (a
 * tag build's token: to the branches its publisher allows), and naming the repository it was built
 * from where the provider names one (none named: that one is stored). Throws the 403 that says
 * which; returns the repository address to store.
 */
export function checkOidcPublish(binding: OidcBinding, record: { branch: string; repositoryUrl?: string | undefined }): string | null {
  if (binding.branch !== null && binding.branch !== record.branch) {
    throw new AppError(
      'forbidden',
      `this token was made for branch "${binding.branch}" (the ref of its ID token): it may not publish to branch "${record.branch}"`,
    );
  }
  if (binding.branch === null) {
    const allowed = binding.publisherBranches ?? [];
    if (!allowed.some((pattern) => globMatches(pattern, record.branch))) {
      throw new AppError(
        'forbidden',
        `this token was made for a tag build: it may publish only to the branches its trusted publisher allows (${allowed.map((b) => `"${b}"`).join(', ')}), not to "${record.branch}"`,
      );
    }
  }
  if (binding.repositoryUrl === null) return record.repositoryUrl ?? null;
  if (record.repositoryUrl === undefined) return binding.repositoryUrl;
  if (!sameRepository(record.repositoryUrl, binding.repositoryUrl)) {
    throw new AppError('forbidden', `this token was made for a build of ${binding.repositoryUrl}: it may not publish a record of repositoryUrl "${record.repositoryUrl}"`);
  }
  return record.repositoryUrl;
}

/**
 * The rule for a resolved user, in the order the auth path reports problems: the password to
 * change and a project token's scope (the access rule of every endpoint, policy/access.ts), then
 * the project. Throws the 403 that says which.
 */
export function checkMayPublish(actor: Actor, projectName: string): void {
  checkActor(actor, { scope: 'publish', purpose: 'publishing' });
  decideOwner(PUBLISH_OWNER, actor, { projectName }, {});
}

/**
 * Says why a credential the precondition refused may not publish to `projectName`: resolves it as
 * the auth path does (a 401 when it no longer holds), then checks the rule (a 403). Returns
 * the actor only when the credential may publish after all (it changed meanwhile, or it is a token made by
 * an ID token exchange, whose publish takes its own precondition).
 */
export async function explainRefusal(services: Services, credential: SignedCredential, projectName: string): Promise<Actor> {
  const actor = credential.kind === 'session' ? await actorFromSession(services, credential) : await actorFromProjectTokenHash(services, credential.tokenHash);
  checkMayPublish(actor, projectName);
  return actor;
}
