// `repoadmin jobs diff [file]`: the plan against the live Jenkins, with unified diffs of updates.
// Exit 0 when nothing would change, 6 when something would, the usual codes otherwise.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';
import { diffOutcome, planSyncOptions, syncCommand, syncOptions, type SyncFlags, type SyncOptions } from './shared.js';

export function diffCommand(deps: Deps, run = runDiff): Command {
  return syncCommand('diff', 'show what apply would change in Jenkins')
    .description(
      'Compare the file with the live Jenkins: one line per item (+ create, ~ update, - delete, = unchanged, ' +
        '! refused) and unified diffs of updates, credential ids and tokens masked.\n\n' +
        'Exit 0: nothing would change; 6: changes are pending; 1: items would be refused.',
    )
    .addHelpText('after', '\nExample:\n  JENKINS_URL=https://ci.example.com JENKINS_USER=seed JENKINS_API_TOKEN=... \\\n    repoadmin jobs diff jenkins-dsl-jobs.json')
    .action(action<SyncFlags, SyncOptions>(deps, (flags, [file]) => syncOptions(file, flags), run));
}

export async function runDiff(options: SyncOptions, deps: Pick<Deps, 'env' | 'io'>): Promise<Report> {
  return diffOutcome((await planSyncOptions(options, deps)).plan);
}
