// `repoadmin events [--follow]`: events in commit order; with --json one JSON object a line
// (NDJSON); --follow keeps waiting for more (long poll) until interrupted.
import { Command } from 'commander';
import type { Event, EventType } from '../../../common/schemas/events.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { printable } from '../../output/printable.js';
import { action, example } from '../support.js';

export interface EventsOptions {
  follow: boolean;
  after?: string;
  types: EventType[];
}

/** Seconds the server holds each request of --follow: within the client's own 30 s time limit. */
const FOLLOW_WAIT_SECONDS = 20;

const collect = (value: string, previous: string[]) => [...previous, value];

export function eventsCommand(deps: Deps, run = runEvents): Command {
  return new Command('events')
    .summary('print events (version published, latest moved, ...)')
    .description('Print events in commit order; --follow keeps waiting for new ones until interrupted.\nWith --json, one JSON object a line (NDJSON).')
    .usage('[--follow] [--after CURSOR] [--type TYPE]... [--json]')
    .option('--follow', 'keep waiting for new events')
    .option('--after <cursor>', 'only events after this cursor (printed on stderr as "next")')
    .option('--type <type>', 'only this event type (repeatable)', collect, [])
    .addHelpText('after', example('repoadmin events --follow --type latest.moved --json | jq -c \'select(.data.artifactId == "shop")\''))
    .action(
      action<{ follow?: boolean; after?: string; type: string[] }, EventsOptions>(
        deps,
        (flags) => ({ follow: Boolean(flags.follow), after: flags.after, types: flags.type as EventType[] }),
        run,
      ),
    );
}

function line(event: Event): string {
  const d = event.data as Record<string, unknown>;
  const what =
    event.type === 'latest.moved'
      ? `${d.projectName} ${d.groupId}:${d.artifactId} ${d.branch}: ${d.from ?? '-'} -> ${d.to ?? '-'} (#${d.seq})`
      : `${d.projectName ?? ''} ${d.groupId ?? ''}:${d.artifactId ?? ''}:${d.version ?? ''} ${d.branch ?? ''}`.trim();
  return printable(`${event.timestamp} ${event.type} ${what}`);
}

/** Prints each event as it is read (NDJSON with --json), so --follow shows them as they come. */
export async function runEvents(opts: EventsOptions, deps: Pick<Deps, 'api' | 'io' | 'settings'>): Promise<Report> {
  let after = opts.after;
  for (;;) {
    const page = await deps.api.events({ after, limit: 1000, wait: opts.follow ? FOLLOW_WAIT_SECONDS : 0, type: opts.types.length ? opts.types : undefined });
    for (const event of page.events) deps.io.out(deps.settings.json ? JSON.stringify(event) : line(event));
    after = page.next;
    if (!opts.follow && page.events.length < 1000) return { json: undefined, notes: [`next: ${after}`] };
  }
}
