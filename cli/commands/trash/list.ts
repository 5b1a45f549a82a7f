// `repoadmin trash list`: records in the trash, newest deletion first.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export interface TrashListOptions {
  project?: string;
}

export function trashListCommand(deps: Deps, run = runTrashList): Command {
  return new Command('list')
    .summary('list records in the trash')
    .description("Records in the trash, newest deletion first: every project's for an administrator, else your project's.")
    .usage('[--project NAME] [--json]')
    .option('--project <name>', "only this project's records")
    .addHelpText('after', example('repoadmin trash list --project shop'))
    .action(action<{ project?: string }, TrashListOptions>(deps, (flags) => ({ project: flags.project }), run));
}

export async function runTrashList(opts: TrashListOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const answer = await deps.api.listTrash({ projectName: opts.project, size: 100 });
  return {
    json: answer,
    table: {
      head: ['DELETED', 'BY', 'PROJECT', 'BRANCH', 'GROUP', 'ARTIFACT', 'VERSION', 'PURGED AFTER', 'UID'],
      rows: answer.records.map((r) => [r.deletedAt, r.deletedBy, r.projectName, r.branch, r.groupId, r.artifactId, r.version, r.purgeAfter, r.uid]),
    },
    notes: answer.records.length === 0 ? ['The trash is empty.'] : answer.page.totalElements > answer.records.length ? [`Showing ${answer.records.length} of ${answer.page.totalElements}.`] : [],
  };
}
