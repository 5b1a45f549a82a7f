// `repoadmin token`: prints the current token, e.g. for curl; its subcommands manage project tokens.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { closest } from '../../../common/suggest.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export type TokenOptions = Record<string, never>;

export function tokenCommand(deps: Deps, run = runToken): Command {
  return new Command('token')
    .summary('print the current token (for curl); create, list and revoke project tokens')
    .description(
      'Without a subcommand: print the token this CLI would send: --token, ' +
        'REPOADMIN_TOKEN, a login with REPOADMIN_USERNAME and REPOADMIN_PASSWORD, ' +
        'or the stored login. create, list and revoke manage long-lived project ' +
        'tokens for pipelines (repoadmin token create --help).',
    )
    .usage('[create|list|revoke] [options]')
    .addHelpText(
      'after',
      example(
        'curl -H "Authorization: Bearer $(repoadmin token)" \\\n    http://localhost:9090/v1/users/me',
        'TOKEN=$(repoadmin token create --name ci --user shop-ci)',
      ),
    )
    // An operand can only be a mistyped subcommand: `token` itself takes none.
    .argument('[subcommand]')
    .action(action<object, TokenOptions>(deps, (_flags, operands) => noOperand(operands), run));
}

const SUBCOMMANDS = ['create', 'list', 'revoke'];

function noOperand(operands: string[]): TokenOptions {
  const word = operands[0];
  if (word === undefined) return {};
  const close = closest(word, SUBCOMMANDS);
  throw new AppError('usage', `unknown command 'token ${word}'${close ? ` (did you mean token ${close}?)` : ` (token takes ${SUBCOMMANDS.join(', ')})`}`);
}

export async function runToken(_opts: TokenOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const creds = await deps.api.credentials();
  return { json: { token: creds.token, expiresAt: creds.expiresAt ?? null }, lines: [creds.token] };
}
