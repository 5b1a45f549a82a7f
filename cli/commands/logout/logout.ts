// `repoadmin logout`: forgets the stored token of a server.
import { Command } from 'commander';
import { normalizeUrl } from '../../config/url.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export type LogoutOptions = Record<string, never>;

export function logoutCommand(deps: Deps, run = runLogout): Command {
  return new Command('logout')
    .summary('forget the stored token of a server')
    .description('Forget the stored token of the server given by --url or REPOADMIN_URL, else of the current one.')
    .usage('[--url URL]')
    .addHelpText('after', example('repoadmin logout', 'repoadmin logout --url https://registry.example.com'))
    .action(action<object, LogoutOptions>(deps, () => ({}), run));
}

export async function runLogout(_opts: LogoutOptions, deps: Pick<Deps, 'env' | 'settings' | 'config'>): Promise<Report> {
  const given = deps.settings.url ?? deps.env.REPOADMIN_URL;
  const url = given ? normalizeUrl(given, deps.settings.url ? '--url' : 'REPOADMIN_URL') : (await deps.config.current())?.url;
  if (!url) return { json: { url: null, username: null }, notes: ['Not logged in anywhere.'] };
  const removed = await deps.config.remove(url);
  if (!removed) return { json: { url, username: null }, notes: [`Not logged in to ${url}.`] };
  return { json: { url, username: removed.username }, notes: [`Logged out ${removed.username} from ${url}.`] };
}
