// `repoadmin token` (the current session token) and `repoadmin token create|list|revoke`.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { tokenCreateCommand } from './create.js';
import { tokenListCommand } from './list.js';
import { tokenRevokeCommand } from './revoke.js';
import { tokenCommand } from './token.js';

export function register(program: Command, deps: Deps): void {
  const token = attach(program, tokenCommand(deps));
  for (const command of [tokenCreateCommand(deps), tokenListCommand(deps), tokenRevokeCommand(deps)]) attach(token, command);
}
