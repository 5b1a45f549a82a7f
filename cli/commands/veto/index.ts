// `repoadmin veto`.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { vetoCommand } from './veto.js';

export function register(program: Command, deps: Deps): void {
  attach(program, vetoCommand(deps));
}
