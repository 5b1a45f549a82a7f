// `repoadmin retention enable|disable`: turns a policy's daily run on or off.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';
import { findPolicy } from './find.js';

export interface RetentionSwitchOptions {
  name: string;
  enabled: boolean;
}

export function retentionSwitchCommand(deps: Deps, enabled: boolean, run = runRetentionSwitch): Command {
  const verb = enabled ? 'enable' : 'disable';
  return new Command(verb)
    .summary(enabled ? 'run a policy daily (after a dry run of its rules)' : 'stop running a policy daily')
    .usage('<name>')
    .argument('<name>', 'the policy\'s name')
    .addHelpText('after', example(`repoadmin retention ${verb} features`))
    .action(action<object, RetentionSwitchOptions>(deps, (_flags, [name]) => ({ name: name!, enabled }), run));
}

export async function runRetentionSwitch(opts: RetentionSwitchOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const policy = await findPolicy(deps, opts.name);
  const changed = await deps.api.changePolicy(policy.id, { enabled: opts.enabled });
  return { json: changed, notes: [`Policy ${changed.name} is ${changed.enabled ? 'enabled: it runs daily' : 'disabled'}.`] };
}
