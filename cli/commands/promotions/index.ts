// `repoadmin promotions`.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { promotionsCommand } from './promotions.js';

export function register(program: Command, deps: Deps): void {
  attach(program, promotionsCommand(deps));
}
