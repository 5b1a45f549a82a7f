// `repoadmin retention remove`: removes a policy (records it deleted stay in the trash).
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';
import { findPolicy } from './find.js';

export function retentionRemoveCommand(deps: Deps, run = runRetentionRemove): Command {
  return new Command('remove')
    .summary('remove a retention policy')
    .usage('<name>')
    .argument('<name>', 'the policy\'s name')
    .addHelpText('after', example('repoadmin retention remove features'))
    .action(action<object, { name: string }>(deps, (_flags, [name]) => ({ name: name! }), run));
}

export async function runRetentionRemove(opts: { name: string }, deps: Pick<Deps, 'api'>): Promise<Report> {
  const policy = await findPolicy(deps, opts.name);
  await deps.api.removePolicy(policy.id);
  return { json: { id: policy.id, name: policy.name }, notes: [`Removed the policy ${policy.name}.`] };
}
