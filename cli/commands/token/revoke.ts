// `repoadmin token revoke`: revokes a project token, named by id or by name, after a confirmation.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { isUserId } from '../user/find.js';
import { action, confirmed, example } from '../support.js';
import { tokenOwner } from './owner.js';

export interface TokenRevokeOptions {
  token: string;
  user?: string;
  yes: boolean;
}

export function tokenRevokeCommand(deps: Deps, run = runTokenRevoke): Command {
  return new Command('revoke')
    .summary('revoke a project token')
    .description(
      "Revoke a project token by id, or by name (yours, or --user's). Pipelines using\n" +
        'it get 401 at once. Asks for confirmation on a terminal; needs --yes elsewhere.',
    )
    .usage('<id|name> [--user USERNAME] [--yes]')
    .argument('<token>', 'the token\'s id or name')
    .option('--user <username>', 'the user whose token has that name')
    .option('--yes', 'do not ask for confirmation')
    .addHelpText('after', example('repoadmin token revoke ci --user shop-ci', 'repoadmin token revoke 0b8e6a8e-3f49-4c7e-9a57-3d1c7d5a2f10 --yes'))
    .action(
      action<{ user?: string; yes?: boolean }, TokenRevokeOptions>(
        deps,
        (flags, [token]) => ({ token: token!, user: flags.user, yes: Boolean(flags.yes) }),
        run,
      ),
    );
}

export async function runTokenRevoke(opts: TokenRevokeOptions, deps: Pick<Deps, 'io' | 'env' | 'prompter' | 'api'>): Promise<Report> {
  const byId = isUserId(opts.token) && !opts.user;
  const owner = byId ? undefined : await tokenOwner(deps, opts.user);
  const { tokens } = await deps.api.listTokens(owner?.userId);
  const token = byId
    ? tokens.find((t) => t.id.toLowerCase() === opts.token.toLowerCase())
    : tokens.find((t) => t.name === opts.token || t.id.toLowerCase() === opts.token.toLowerCase());
  if (!token) {
    const whose = owner ? ` of ${owner.username}` : '';
    throw new AppError('not_found', `no project token ${byId ? 'with id' : 'named'} ${opts.token}${whose}: see repoadmin token list`);
  }
  const used = token.lastUsedAt ? `last used ${token.lastUsedAt}` : 'never used';
  if (!(await confirmed(deps, opts.yes, `Revoke the ${token.scope} token "${token.name}" of ${token.username} (${used})? Pipelines using it stop working.`))) {
    throw new AppError('validation', 'not confirmed: nothing was revoked');
  }
  await deps.api.revokeToken(token.id);
  return { json: { id: token.id, name: token.name, username: token.username }, notes: [`Revoked the token "${token.name}" of ${token.username}.`] };
}
