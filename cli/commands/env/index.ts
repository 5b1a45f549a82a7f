// `repoadmin env list|set`.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach, example } from '../support.js';
import { envListCommand } from './list.js';
import { envSetCommand } from './set.js';

export function register(program: Command, deps: Deps): void {
  const env = attach(
    program,
    new Command('env')
      .summary("a project's environments: list what runs where, set them and their gates")
      .usage('list|set [options]')
      .addHelpText('after', example('repoadmin env list --project shop', 'repoadmin env set --project shop dev staging:requires=dev prod:requires=staging,soak=60,protected')),
  );
  for (const command of [envListCommand(deps), envSetCommand(deps)]) attach(env, command);
}
