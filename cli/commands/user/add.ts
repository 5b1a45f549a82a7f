// `repoadmin user add`: creates a user of a project (administrators only).
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import type { Role } from '../../../common/schemas/users.js';
import { canPrompt, noPromptReason, type Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example, newPassword, valueOrAsk } from '../support.js';

export interface UserAddOptions {
  username: string;
  project?: string;
  role?: Role;
  passwordStdin: boolean;
}

/** `admin` or `user` (or the server's own ROLE_ names). */
export function parseRole(value: string): Role {
  const role = value.toLowerCase().replace(/^role_/, '');
  if (role === 'admin') return 'ROLE_ADMIN';
  if (role === 'user') return 'ROLE_USER';
  throw new AppError('usage', `--role must be admin or user, not "${value}"`);
}

export function userAddCommand(deps: Deps, run = runUserAdd): Command {
  return new Command('add')
    .summary('create a user (administrators only)')
    .description('Create a user of a project. The password comes from standard input (--password-stdin) or, on a terminal, from a prompt.')
    .usage('<username> --project P --role admin|user [options]')
    .argument('<username>', 'the new user name')
    .option('--project <name>', 'the project the user publishes for')
    .option('--role <role>', 'admin or user')
    .option('--password-stdin', 'read the password from standard input')
    .addHelpText('after', example('printf %s "$NEW_PASSWORD" |\n    repoadmin user add shop-ci --project shop --role user --password-stdin'))
    .action(
      action<{ project?: string; role?: string; passwordStdin?: boolean }, UserAddOptions>(
        deps,
        (flags, [username]) => ({
          username: username!,
          project: flags.project,
          role: flags.role === undefined ? undefined : parseRole(flags.role),
          passwordStdin: Boolean(flags.passwordStdin),
        }),
        run,
      ),
    );
}

export async function runUserAdd(opts: UserAddOptions, deps: Pick<Deps, 'io' | 'env' | 'prompter' | 'api'>): Promise<Report> {
  const projectName = await valueOrAsk(deps, { value: opts.project, question: 'Project:', supply: '--project' });
  let role = opts.role;
  if (!role) {
    if (!canPrompt(deps)) throw new AppError('usage', `missing --role (admin or user) (${noPromptReason(deps)})`);
    role = parseRole(await deps.prompter.input('Role (admin or user):', { default: 'user' }));
  }
  const password = await newPassword(deps, opts.passwordStdin, opts.username);
  const result = await deps.api.createUser({ username: opts.username, password, projectName, role });
  return {
    json: result,
    lines: [result.userId ?? ''],
    notes: [`Created user ${opts.username} (${role}, project ${projectName}).`],
  };
}
