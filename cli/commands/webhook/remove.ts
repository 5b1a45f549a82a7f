// `repoadmin webhook remove`: removes a webhook and its delivery history.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export function webhookRemoveCommand(deps: Deps, run = runWebhookRemove): Command {
  return new Command('remove')
    .summary('remove a webhook')
    .usage('<id>')
    .argument('<id>', 'the webhook\'s id (repoadmin webhook list)')
    .action(action<object, { id: string }>(deps, (_flags, [id]) => ({ id: id! }), run));
}

export async function runWebhookRemove(opts: { id: string }, deps: Pick<Deps, 'api'>): Promise<Report> {
  await deps.api.deleteWebhook(opts.id);
  return { json: { id: opts.id }, notes: [`Removed the webhook ${opts.id}.`] };
}
