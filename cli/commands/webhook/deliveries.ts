// `repoadmin webhook deliveries`: a webhook's recent deliveries with their attempts and last answer.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export interface WebhookDeliveriesOptions {
  id: string;
  failed: boolean;
}

export function webhookDeliveriesCommand(deps: Deps, run = runWebhookDeliveries): Command {
  return new Command('deliveries')
    .summary('list a webhook\'s deliveries, newest first')
    .usage('<id> [--failed] [--json]')
    .argument('<id>', 'the webhook\'s id')
    .option('--failed', 'only the deliveries that failed for good')
    .action(action<{ failed?: boolean }, WebhookDeliveriesOptions>(deps, (flags, [id]) => ({ id: id!, failed: Boolean(flags.failed) }), run));
}

export async function runWebhookDeliveries(opts: WebhookDeliveriesOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const answer = await deps.api.webhookDeliveries(opts.id, { status: opts.failed ? 'failed' : undefined, size: 50 });
  return {
    json: answer,
    table: {
      head: ['ID', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST STATUS', 'LAST ATTEMPT', 'NEXT ATTEMPT', 'LAST ERROR'],
      rows: answer.deliveries.map((d) => [d.id, d.type, d.status, d.attempts, d.lastStatus ?? '', d.lastAttemptAt ?? '', d.nextAttemptAt ?? '', d.lastError ?? '']),
    },
    notes: answer.deliveries.length === 0 ? ['No deliveries.'] : [],
  };
}
