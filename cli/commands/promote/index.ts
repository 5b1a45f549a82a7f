// `repoadmin promote`.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { promoteCommand } from './promote.js';

export function register(program: Command, deps: Deps): void {
  attach(program, promoteCommand(deps));
}
