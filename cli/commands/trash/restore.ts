// `repoadmin trash restore`: puts a record of the trash back.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export interface TrashRestoreOptions {
  uid: string;
}

export function trashRestoreCommand(deps: Deps, run = runTrashRestore): Command {
  return new Command('restore')
    .summary('put a record of the trash back')
    .description('Put a record back under its uid; refused when its coordinates were published again meanwhile.')
    .usage('<uid>')
    .argument('<uid>', "the record's uid (repoadmin trash list)")
    .addHelpText('after', example('repoadmin trash restore 5c6a1223-076b-4bc0-b0b7-20b0da0e23fd'))
    .action(action<object, TrashRestoreOptions>(deps, (_flags, [uid]) => ({ uid: uid! }), run));
}

export async function runTrashRestore(opts: TrashRestoreOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const record = await deps.api.restoreVersion(opts.uid);
  const latest = record.latestVersion ? ' (the latest of its key)' : '';
  return { json: record, notes: [`Restored ${record.groupId}:${record.artifactId}:${record.version} on ${record.projectName} ${record.branch}${latest}.`] };
}
