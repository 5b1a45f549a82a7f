// `repoadmin webhook list`: the webhooks, never their secrets.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export function webhookListCommand(deps: Deps, run = runWebhookList): Command {
  return new Command('list')
    .summary('list the webhooks')
    .usage('[--json]')
    .action(action<object, object>(deps, () => ({}), run));
}

export async function runWebhookList(_opts: object, deps: Pick<Deps, 'api'>): Promise<Report> {
  const answer = await deps.api.listWebhooks();
  return {
    json: answer,
    table: {
      head: ['ID', 'URL', 'ACTIVE', 'EVENTS', 'PROJECTS', 'FAILURES'],
      rows: answer.webhooks.map((w) => [w.id, w.url, w.active ? 'yes' : `no${w.disabledReason ? ` (${w.disabledReason})` : ''}`, w.events.join(','), w.projects?.join(',') ?? 'all', w.failuresInRow]),
    },
    notes: answer.webhooks.length === 0 ? ['No webhooks.'] : [],
  };
}
