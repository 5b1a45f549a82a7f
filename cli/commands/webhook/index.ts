// `repoadmin webhook add|list|remove|ping|deliveries|redeliver|rotate-secret`.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { webhookAddCommand } from './add.js';
import { webhookDeliveriesCommand } from './deliveries.js';
import { webhookListCommand } from './list.js';
import { webhookPingCommand } from './ping.js';
import { webhookRedeliverCommand } from './redeliver.js';
import { webhookRemoveCommand } from './remove.js';
import { webhookRotateSecretCommand } from './rotate-secret.js';

export function register(program: Command, deps: Deps): void {
  const webhook = attach(program, new Command('webhook').summary('signed deliveries of events to other systems').description('Webhooks: signed POSTs of events (docs/webhooks.md). Administrators only.'));
  for (const command of [
    webhookAddCommand(deps), webhookListCommand(deps), webhookRemoveCommand(deps), webhookPingCommand(deps),
    webhookDeliveriesCommand(deps), webhookRedeliverCommand(deps), webhookRotateSecretCommand(deps),
  ]) attach(webhook, command);
}
