// `repoadmin webhook rotate-secret`: a new signing secret; the previous one signs beside it for 24 h.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export function webhookRotateSecretCommand(deps: Deps, run = runWebhookRotateSecret): Command {
  return new Command('rotate-secret')
    .summary('make a new signing secret (prints it once)')
    .usage('<id>')
    .argument('<id>', 'the webhook\'s id')
    .action(action<object, { id: string }>(deps, (_flags, [id]) => ({ id: id! }), run));
}

export async function runWebhookRotateSecret(opts: { id: string }, deps: Pick<Deps, 'api'>): Promise<Report> {
  const rotated = await deps.api.rotateWebhookSecret(opts.id);
  return {
    json: rotated,
    lines: [rotated.secret],
    notes: [`The line above is the new secret, not shown again. The previous one keeps signing beside it until ${rotated.previousValidUntil}.`],
  };
}
