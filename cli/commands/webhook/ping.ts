// `repoadmin webhook ping`: delivers a ping now and says what the receiver answered.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export function webhookPingCommand(deps: Deps, run = runWebhookPing): Command {
  return new Command('ping')
    .summary('deliver a ping now')
    .usage('<id>')
    .argument('<id>', 'the webhook\'s id')
    .action(action<object, { id: string }>(deps, (_flags, [id]) => ({ id: id! }), run));
}

export async function runWebhookPing(opts: { id: string }, deps: Pick<Deps, 'api'>): Promise<Report> {
  const result = await deps.api.pingWebhook(opts.id);
  const line = result.delivered
    ? `Delivered: the receiver answered ${result.status} in ${result.durationMs} ms.`
    : `Not delivered: ${result.error}.`;
  return { json: result, lines: [line], failure: result.delivered ? undefined : new AppError('failed', `the ping was not delivered: ${result.error}`) };
}
