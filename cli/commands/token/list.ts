// `repoadmin token list`: project tokens with their scope, expiry and last use (never the secret).
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';
import { tokenOwner } from './owner.js';

export interface TokenListOptions {
  user?: string;
}

export function tokenListCommand(deps: Deps, run = runTokenList): Command {
  return new Command('list')
    .summary('list project tokens (administrators: everyone\'s)')
    .description('List project tokens: your own, or everyone\'s for an administrator; --user for one user\'s.')
    .usage('[--user USERNAME] [--json]')
    .option('--user <username>', 'only this user\'s tokens')
    .addHelpText('after', example('repoadmin token list --user shop-ci', 'repoadmin token list --json |\n    jq -r \'.tokens[] | select(.lastUsedAt == null) | .id\''))
    .action(action<{ user?: string }, TokenListOptions>(deps, (flags) => ({ user: flags.user }), run));
}

export async function runTokenList(opts: TokenListOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const userId = opts.user ? (await tokenOwner(deps, opts.user)).userId : undefined;
  const answer = await deps.api.listTokens(userId);
  return {
    json: answer,
    table: {
      head: ['NAME', 'SCOPE', 'USER', 'PROJECT', 'CREATED', 'EXPIRES', 'LAST USED', 'ID'],
      rows: answer.tokens.map((t) => [t.name, t.scope, t.username, t.projectName, t.createdAt, t.expiresAt ?? 'never', t.lastUsedAt ?? 'never', t.id]),
    },
    notes: answer.tokens.length === 0 ? ['No project tokens.'] : [],
  };
}
