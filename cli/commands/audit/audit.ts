// `repoadmin audit`: the audit log, newest first (administrators).
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export interface AuditOptions {
  actor?: string;
  action?: string;
  /** An ISO date-time with an offset. */
  since?: string;
}

/** `7d`, `12h`, `30m`, or a date-time with an offset: the ISO date-time it names. */
export function sinceDate(text: string, now: Date): string {
  const relative = /^(\d{1,5})([dhm])$/.exec(text);
  if (relative) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[relative[2] as 'd' | 'h' | 'm'];
    return new Date(now.getTime() - Number(relative[1]) * unit).toISOString();
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00Z`;
  if (!Number.isNaN(Date.parse(text)) && /T.*(Z|[+-]\d{2}:?\d{2})$/.test(text)) return text;
  throw new AppError('usage', `--since takes 7d, 12h, 30m, a date (2026-11-01) or a date-time with an offset, not "${text}"`);
}

export function auditCommand(deps: Deps, run = runAudit): Command {
  return new Command('audit')
    .summary('show the audit log (administrators)')
    .usage('[--actor NAME] [--action A] [--since 7d|DATE] [--json]')
    .option('--actor <name>', 'only this user\'s actions')
    .option('--action <action>', 'only this action, e.g. login or webhook.disabled')
    .option('--since <when>', 'only entries since: 7d, 12h, 30m, or a date')
    .addHelpText('after', example('repoadmin audit --action login --since 7d'))
    .action(
      action<{ actor?: string; action?: string; since?: string }, AuditOptions>(
        deps,
        (flags) => ({ actor: flags.actor, action: flags.action, since: flags.since === undefined ? undefined : sinceDate(flags.since, deps.now()) }),
        run,
      ),
    );
}

export async function runAudit(opts: AuditOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const answer = await deps.api.audit({ actor: opts.actor, action: opts.action, since: opts.since, size: 100 });
  return {
    json: answer,
    table: {
      head: ['AT', 'ACTOR', 'VIA', 'ACTION', 'TARGET', 'OUTCOME', 'ADDRESS', 'REQUEST'],
      rows: answer.entries.map((e) => [e.at, e.actor.username ?? '(server)', e.via ?? '', e.action, e.target ?? '', e.outcome, e.address ?? '', e.requestId ?? '']),
    },
    notes: answer.entries.length === 0 ? ['No entries.'] : [],
  };
}
