// `repoadmin whoami`: who the token belongs to, on which server, until when.
import { Command } from 'commander';
import { TOKEN_PREFIX } from '../../../common/schemas/tokens.js';
import type { Credentials } from '../../api/client.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export type WhoamiOptions = Record<string, never>;

export function whoamiCommand(deps: Deps, run = runWhoami): Command {
  return new Command('whoami')
    .summary('show the user, role, project, server and token expiry')
    .description('Show who the current token belongs to (asks the server), the server, and when the token expires.')
    .usage('[--url URL] [--json]')
    .addHelpText('after', example('repoadmin whoami', 'repoadmin whoami --json'))
    .action(action<object, WhoamiOptions>(deps, () => ({}), run));
}

export async function runWhoami(_opts: WhoamiOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const creds = await deps.api.credentials();
  const url = await deps.api.serverUrl();
  // A token made from the CI's ID token belongs to a pipeline, not a user: the exchange said all there is.
  if (creds.source === 'oidc') return pipelineToken(creds, url);
  const me = await deps.api.me();
  const expiresAt = creds.expiresAt ?? null;
  return {
    json: { username: me.username, userId: me.userId, role: me.role, projectName: me.projectName, url, expiresAt },
    table: {
      head: [],
      rows: [
        ['user', me.username],
        ['user id', me.userId],
        ['role', me.role],
        ['project', me.projectName ?? '(none)'],
        ['server', url],
        ['token expires', expiresAt ?? (creds.token.startsWith(TOKEN_PREFIX) ? '(a project token: repoadmin token list shows its expiry)' : '(unknown)')],
      ],
    },
  };
}

function pipelineToken(creds: Credentials, url: string): Report {
  const branch = creds.branch === null ? '(a tag build: the branches its publisher allows)' : (creds.branch ?? '');
  return {
    json: { username: null, userId: null, role: null, projectName: creds.projectName ?? null, url, expiresAt: creds.expiresAt ?? null, publisherId: creds.publisherId ?? null, branch: creds.branch ?? null },
    table: {
      head: [],
      rows: [
        ['user', '(none: a token made from the CI\'s ID token)'],
        ['trusted publisher', creds.publisherId],
        ['project', creds.projectName],
        ['branch', branch],
        ['server', url],
        ['token expires', creds.expiresAt ?? '(unknown)'],
      ],
    },
  };
}
