// The work every server does on a schedule, once across all instances (server/schedule.ts): the
// daily retention runs, emptying the trash, and expiring events, webhook deliveries and audit
// entries past their days. Webhook deliveries themselves are sent by every process (services/outbox.ts).
import { expireAudit } from './db/audit.js';
import { expireEvents } from './db/events.js';
import { emptyTrash } from './db/trash.js';
import { expireDeliveries } from './db/webhooks.js';
import type { Scheduler } from './schedule.js';
import type { Services } from './services/context.js';
import { runDueRetention } from './services/retention.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Days a webhook's finished deliveries are kept (docs/webhooks.md). */
const DELIVERY_DAYS = 30;

export function registerTasks(scheduler: Scheduler, services: Services): void {
  const { db, config } = services;
  const expiring = (name: string, work: (now: Date) => Promise<number>) =>
    scheduler.register({
      name,
      every: HOUR,
      run: async () => {
        const removed = await work(services.now());
        if (removed > 0) services.log.info({ task: name, removed }, 'expired rows removed');
      },
    });
  expiring('events.expire', (now) => expireEvents(db, now, config.events.days));
  expiring('deliveries.expire', (now) => expireDeliveries(db, now, DELIVERY_DAYS));
  expiring('audit.expire', (now) => expireAudit(db, now, config.audit.days));
  expiring('trash.empty', (now) => emptyTrash(db, now, config.trashDays));
  // Looked at every minute: a policy runs once a day from the configured time on, its run row
  // (server/db/retention.ts) making it once across instances even when two claim the tick.
  scheduler.register({
    name: 'retention.daily',
    every: MINUTE,
    run: async () => {
      await runDueRetention(services, services.now());
    },
  });
}
