// `repoadmin trust add|list|remove`: the trusted publishers whose CI ID tokens may publish (docs/pipelines.md).
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach, example } from '../support.js';
import { trustAddCommand } from './add.js';
import { trustListCommand } from './list.js';
import { trustRemoveCommand } from './remove.js';

export function register(program: Command, deps: Deps): void {
  const trust = attach(
    program,
    new Command('trust')
      .summary('trusted publishers: pipelines that publish with their CI ID token')
      .description('Trusted publishers: a CI pipeline proves who it is with its ID token and gets a token of minutes (docs/pipelines.md). Administrators only.')
      .usage('add|list|remove [options]')
      .addHelpText('after', example('repoadmin trust add --project shop --provider github --claim repository=acme/shop --branch main', 'repoadmin trust list --project shop')),
  );
  for (const command of [trustAddCommand(deps), trustListCommand(deps), trustRemoveCommand(deps)]) attach(trust, command);
}
