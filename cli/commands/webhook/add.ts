// `repoadmin webhook add`: a webhook for some event types and projects; prints its secret once.
import { Command } from 'commander';
import { EVENT_TYPES, type EventType } from '../../../common/schemas/events.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export interface WebhookAddOptions {
  url: string;
  events: EventType[];
  projects: string[];
  description?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function webhookAddCommand(deps: Deps, run = runWebhookAdd): Command {
  return new Command('add')
    .summary('add a webhook (prints its secret once)')
    .description(`Add a webhook: signed POSTs of events to a URL (docs/webhooks.md).\nEvent types: ${EVENT_TYPES.join(', ')}; default: all.`)
    .usage('<url> [--event TYPE]... [--project NAME]... [--description TEXT]')
    .argument('<url>', 'where to deliver (http or https)')
    .option('--event <type>', 'an event type to deliver (repeatable)', collect, [])
    .option('--project <name>', 'only this project\'s events (repeatable)', collect, [])
    .option('--description <text>', 'what the webhook is for')
    .addHelpText('after', example('repoadmin webhook add https://ci.example.com/hooks/repoadmin --event latest.moved --project shop'))
    .action(
      action<{ event: string[]; project: string[]; description?: string }, WebhookAddOptions>(
        deps,
        (flags, [url]) => ({ url: url!, events: flags.event as EventType[], projects: flags.project, description: flags.description }),
        run,
      ),
    );
}

export async function runWebhookAdd(opts: WebhookAddOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const created = await deps.api.createWebhook({
    url: opts.url,
    events: opts.events.length ? opts.events : undefined,
    projects: opts.projects.length ? opts.projects : undefined,
    description: opts.description,
  });
  return {
    json: created,
    lines: [created.secret],
    notes: [`Added the webhook ${created.id} for ${created.url}.`, 'The line above is its signing secret: it is not shown again.'],
  };
}
