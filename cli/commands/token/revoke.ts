// `repoadmin token revoke`: revokes a project token, named by id or by name, or with --all every
// token of a user (after a leaked password), after a confirmation.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { isUserId } from '../user/find.js';
import { action, confirmed, example } from '../support.js';
import { everyToken } from './list.js';
import { tokenOwner } from './owner.js';

export interface TokenRevokeOptions {
  /** Absent with `all`. */
  token?: string;
  user?: string;
  all?: boolean;
  yes: boolean;
}

export function tokenRevokeCommand(deps: Deps, run = runTokenRevoke): Command {
  return new Command('revoke')
    .summary('revoke a project token')
    .description(
      "Revoke a project token by id, or by name (yours, or --user's); with --all every\n" +
        "token of yours or of --user's (after a leaked password). Pipelines using them\n" +
        'get 401 at once. Asks for confirmation on a terminal; needs --yes elsewhere.',
    )
    .usage('<id|name> | --all [--user USERNAME] [--yes]')
    .argument('[token]', 'the token\'s id or name')
    .option('--user <username>', 'the user whose token (or tokens, --all) it is')
    .option('--all', "revoke every project token of the user")
    .option('--yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      example('repoadmin token revoke ci --user shop-ci', 'repoadmin token revoke --all --user shop-ci --yes', 'repoadmin token revoke 0b8e6a8e-3f49-4c7e-9a57-3d1c7d5a2f10 --yes'),
    )
    .action(
      action<{ user?: string; all?: boolean; yes?: boolean }, TokenRevokeOptions>(
        deps,
        (flags, [token]) => ({ token, user: flags.user, all: Boolean(flags.all), yes: Boolean(flags.yes) }),
        run,
      ),
    );
}

export async function runTokenRevoke(opts: TokenRevokeOptions, deps: Pick<Deps, 'io' | 'env' | 'prompter' | 'api'>): Promise<Report> {
  if (opts.all) {
    if (opts.token !== undefined) throw new AppError('usage', `--all revokes every token of the user: name no token (${opts.token})`);
    return revokeAll(opts, deps);
  }
  if (opts.token === undefined) throw new AppError('usage', 'missing the token: its id or name, or --all for every token of the user');
  const name = opts.token;
  const byId = isUserId(name) && !opts.user;
  const owner = byId ? undefined : await tokenOwner(deps, opts.user);
  const { tokens } = await everyToken(deps, owner?.userId);
  const token = byId
    ? tokens.find((t) => t.id.toLowerCase() === name.toLowerCase())
    : tokens.find((t) => t.name === name || t.id.toLowerCase() === name.toLowerCase());
  if (!token) {
    const whose = owner ? ` of ${owner.username}` : '';
    throw new AppError('not_found', `no project token ${byId ? 'with id' : 'named'} ${name}${whose}: see repoadmin token list`);
  }
  const used = token.lastUsedAt ? `last used ${token.lastUsedAt}` : 'never used';
  if (!(await confirmed(deps, opts.yes, `Revoke the ${token.scope} token "${token.name}" of ${token.username} (${used})? Pipelines using it stop working.`))) {
    throw new AppError('validation', 'not confirmed: nothing was revoked');
  }
  await deps.api.revokeToken(token.id);
  return { json: { id: token.id, name: token.name, username: token.username }, notes: [`Revoked the token "${token.name}" of ${token.username}.`] };
}

async function revokeAll(opts: TokenRevokeOptions, deps: Pick<Deps, 'io' | 'env' | 'prompter' | 'api'>): Promise<Report> {
  const owner = await tokenOwner(deps, opts.user);
  if (!(await confirmed(deps, opts.yes, `Revoke every project token of ${owner.username}? Pipelines using them stop working.`))) {
    throw new AppError('validation', 'not confirmed: nothing was revoked');
  }
  const { revoked } = await deps.api.revokeAllTokens(owner.userId);
  const count = revoked === 1 ? '1 project token' : `${revoked} project tokens`;
  return { json: { userId: owner.userId, username: owner.username, revoked }, notes: [`Revoked ${count} of ${owner.username}.`] };
}
