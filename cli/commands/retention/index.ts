// `repoadmin retention add|list|run|enable|disable|remove`.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach, example } from '../support.js';
import { retentionAddCommand } from './add.js';
import { retentionListCommand } from './list.js';
import { retentionRemoveCommand } from './remove.js';
import { retentionRunCommand } from './run.js';
import { retentionSwitchCommand } from './switch.js';

export function register(program: Command, deps: Deps): void {
  const retention = attach(
    program,
    new Command('retention')
      .summary('retention policies: add, list, run, enable, disable, remove')
      .usage('add|list|run|enable|disable|remove [options]')
      .addHelpText('after', example('repoadmin retention list', 'repoadmin retention run features --dry-run')),
  );
  const commands = [
    retentionAddCommand(deps),
    retentionListCommand(deps),
    retentionRunCommand(deps),
    retentionSwitchCommand(deps, true),
    retentionSwitchCommand(deps, false),
    retentionRemoveCommand(deps),
  ];
  for (const command of commands) attach(retention, command);
}
