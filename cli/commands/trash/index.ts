// `repoadmin trash list|restore`.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach, example } from '../support.js';
import { trashListCommand } from './list.js';
import { trashRestoreCommand } from './restore.js';

export function register(program: Command, deps: Deps): void {
  const trash = attach(
    program,
    new Command('trash')
      .summary('deleted records: list, restore')
      .usage('list|restore [options]')
      .addHelpText('after', example('repoadmin trash list', 'repoadmin trash restore <uid>')),
  );
  for (const command of [trashListCommand(deps), trashRestoreCommand(deps)]) attach(trash, command);
}
