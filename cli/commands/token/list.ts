// `repoadmin token list`: project tokens with their scope, expiry and last use (never the secret).
import { Command } from 'commander';
import { PAGE_SIZE_MAX } from '../../../common/schemas/repositories.js';
import type { ProjectToken, ProjectTokenList } from '../../../common/schemas/tokens.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example, wholeNumber } from '../support.js';
import { tokenOwner } from './owner.js';

export interface TokenListOptions {
  user?: string;
  /** With `page` or `size`, one page only (page 1 by default); without either, every page. */
  page?: number;
  size?: number;
}

export function tokenListCommand(deps: Deps, run = runTokenList): Command {
  return new Command('list')
    .summary('list project tokens (administrators: everyone\'s)')
    .description(
      'List project tokens: your own, or everyone\'s for an administrator; --user for one user\'s. ' +
        'Every token unless --page or --size asks for one page.',
    )
    .usage('[--user USERNAME] [--page N] [--size N] [--json]')
    .option('--user <username>', 'only this user\'s tokens')
    .option('--page <n>', 'only this page, from 1')
    .option('--size <n>', `only one page of this many tokens (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_MAX})`)
    .addHelpText('after', example('repoadmin token list --user shop-ci', 'repoadmin token list --json |\n    jq -r \'.tokens[] | select(.lastUsedAt == null) | .id\''))
    .action(
      action<{ user?: string; page?: string; size?: string }, TokenListOptions>(
        deps,
        (flags) => ({ user: flags.user, page: wholeNumber(flags.page, '--page'), size: wholeNumber(flags.size, '--size', 1, PAGE_SIZE_MAX) }),
        run,
      ),
    );
}

/**
 * Every token of `userId` (or all the caller may see), page after page, the largest pages the
 * server gives. A token listed twice, because one was made or revoked between two pages, counts once.
 */
export async function everyToken(deps: Pick<Deps, 'api'>, userId: string | undefined): Promise<ProjectTokenList> {
  const tokens = new Map<string, ProjectToken>();
  for (let page = 1; ; page++) {
    const answer = await deps.api.listTokens({ userId, page, size: PAGE_SIZE_MAX });
    for (const token of answer.tokens) tokens.set(token.id, token);
    // A server from before paging answers every token at once, without `page`.
    const last = (answer.page as ProjectTokenList['page'] | undefined)?.totalPages ?? page;
    if (page >= last || answer.tokens.length === 0) {
      const all = [...tokens.values()];
      return { tokens: all, page: { totalElements: all.length, totalPages: 1, currentPage: 1, numberOfElements: all.length } };
    }
  }
}

export async function runTokenList(opts: TokenListOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const userId = opts.user ? (await tokenOwner(deps, opts.user)).userId : undefined;
  const onePage = opts.page !== undefined || opts.size !== undefined;
  const answer = onePage ? await deps.api.listTokens({ userId, page: opts.page, size: opts.size }) : await everyToken(deps, userId);
  const { currentPage, totalPages, totalElements } = answer.page;
  const notes: string[] = [];
  if (answer.tokens.length === 0 && totalElements > 0) notes.push(`Page ${currentPage} is past the last page (${totalPages}) of the ${totalElements} tokens.`);
  else if (answer.tokens.length === 0) notes.push('No project tokens.');
  else if (currentPage < totalPages) notes.push(`Page ${currentPage} of ${totalPages} (${totalElements} tokens): --page ${currentPage + 1} for the next, or leave out --page and --size for all.`);
  return {
    json: answer,
    table: {
      head: ['NAME', 'SCOPE', 'USER', 'PROJECT', 'CREATED', 'EXPIRES', 'LAST USED', 'ID'],
      rows: answer.tokens.map((t) => [t.name, t.scope, t.username, t.projectName, t.createdAt, t.expiresAt ?? 'never', t.lastUsedAt ?? 'never', t.id]),
    },
    notes,
  };
}
