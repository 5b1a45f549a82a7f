// `repoadmin user delete`: deletes a user after a confirmation (administrators only).
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, confirmed, example } from '../support.js';
import { findUser } from './find.js';

export interface UserDeleteOptions {
  user: string;
  yes: boolean;
}

export function userDeleteCommand(deps: Deps, run = runUserDelete): Command {
  return new Command('delete')
    .summary('delete a user (administrators only)')
    .description('Delete a user and revoke its tokens. Asks for confirmation on a terminal; needs --yes elsewhere.')
    .usage('<username|userId> [--yes]')
    .argument('<user>', 'user name or userId')
    .option('--yes', 'do not ask for confirmation')
    .addHelpText('after', example('repoadmin user delete shop-ci', 'repoadmin user delete shop-ci --yes'))
    .action(action<{ yes?: boolean }, UserDeleteOptions>(deps, (flags, [user]) => ({ user: user!, yes: Boolean(flags.yes) }), run));
}

export async function runUserDelete(opts: UserDeleteOptions, deps: Pick<Deps, 'io' | 'env' | 'prompter' | 'api'>): Promise<Report> {
  const user = await findUser(deps, opts.user);
  const project = user.projectName ? `, project ${user.projectName}` : '';
  if (!(await confirmed(deps, opts.yes, `Delete user ${user.username} (${user.role}${project})? This cannot be undone.`))) {
    throw new AppError('validation', 'not confirmed: nothing was deleted');
  }
  await deps.api.deleteUser(user.userId);
  return { json: { userId: user.userId, username: user.username }, notes: [`Deleted user ${user.username}.`] };
}
