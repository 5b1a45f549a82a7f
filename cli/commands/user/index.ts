// `repoadmin user add|passwd|delete|list`.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach, example } from '../support.js';
import { userAddCommand } from './add.js';
import { userDeleteCommand } from './delete.js';
import { userListCommand } from './list.js';
import { userPasswdCommand } from './passwd.js';

export function register(program: Command, deps: Deps): void {
  const user = attach(
    program,
    new Command('user')
      .summary('manage users: add, passwd, delete, list')
      .usage('add|passwd|delete|list [options]')
      .addHelpText('after', example('repoadmin user list', 'repoadmin user passwd')),
  );
  for (const command of [userAddCommand(deps), userPasswdCommand(deps), userDeleteCommand(deps), userListCommand(deps)]) {
    attach(user, command);
  }
}
