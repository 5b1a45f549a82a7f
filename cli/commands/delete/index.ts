// `repoadmin delete`.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { deleteCommand } from './delete.js';

export function register(program: Command, deps: Deps): void {
  attach(program, deleteCommand(deps));
}
