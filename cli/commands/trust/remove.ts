// `repoadmin trust remove`: removes a trusted publisher; the tokens it made stop working.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export function trustRemoveCommand(deps: Deps, run = runTrustRemove): Command {
  return new Command('remove')
    .summary('remove a trusted publisher (revoking the tokens it made)')
    .usage('<id>')
    .argument('<id>', "the publisher's id (repoadmin trust list)")
    .action(action<object, { id: string }>(deps, (_flags, [id]) => ({ id: id! }), run));
}

export async function runTrustRemove(opts: { id: string }, deps: Pick<Deps, 'api'>): Promise<Report> {
  await deps.api.removeTrustedPublisher(opts.id);
  return { json: { id: opts.id }, notes: [`Removed the trusted publisher ${opts.id}; the tokens it made no longer work.`] };
}
