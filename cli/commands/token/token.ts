// `repoadmin token`: prints the current token, e.g. for curl.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export type TokenOptions = Record<string, never>;

export function tokenCommand(deps: Deps, run = runToken): Command {
  return new Command('token')
    .summary('print the current token (for curl)')
    .description('Print the token this CLI would send: --token, REPOADMIN_TOKEN, a login with REPOADMIN_USERNAME and REPOADMIN_PASSWORD, or the stored login.')
    .usage('[--url URL] [--json]')
    .addHelpText('after', example('curl -H "Authorization: Bearer $(repoadmin token)" \\\n    http://localhost:9090/v1/users/me'))
    .action(action<object, TokenOptions>(deps, () => ({}), run));
}

export async function runToken(_opts: TokenOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const creds = await deps.api.credentials();
  return { json: { token: creds.token, expiresAt: creds.expiresAt ?? null }, lines: [creds.token] };
}
