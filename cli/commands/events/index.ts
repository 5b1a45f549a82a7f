import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { eventsCommand } from './events.js';

export function register(program: Command, deps: Deps): void {
  attach(program, eventsCommand(deps));
}
