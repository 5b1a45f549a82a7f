// `repoadmin webhook redeliver`: sends a delivery again, with the same webhook-id.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export function webhookRedeliverCommand(deps: Deps, run = runWebhookRedeliver): Command {
  return new Command('redeliver')
    .summary('send a delivery again')
    .usage('<id> <deliveryId>')
    .argument('<id>', 'the webhook\'s id')
    .argument('<deliveryId>', 'the delivery\'s id (repoadmin webhook deliveries)')
    .action(action<object, { id: string; deliveryId: string }>(deps, (_flags, [id, deliveryId]) => ({ id: id!, deliveryId: deliveryId! }), run));
}

export async function runWebhookRedeliver(opts: { id: string; deliveryId: string }, deps: Pick<Deps, 'api'>): Promise<Report> {
  await deps.api.redeliver(opts.id, opts.deliveryId);
  return { json: opts, notes: [`Queued the delivery ${opts.deliveryId} again.`] };
}
