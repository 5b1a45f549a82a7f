import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { auditCommand } from './audit.js';

export function register(program: Command, deps: Deps): void {
  attach(program, auditCommand(deps));
}
