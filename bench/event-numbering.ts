// The outbox's first step alone (server/services/events.ts, dispatchEvents), in this process on
// PostgreSQL: events shaped like a publish's are written, a round's worth at a time, and numbered,
// round after round, with no webhook (as on most servers) and with one that wants none of them.
// Prints this process's CPU (user + system) and the wall time per event numbered: the statements
// run one after another, so the wall time holds PostgreSQL's part too.
//   npm run bench:event-numbering -- [--batch 200] [--rounds 60]
import { parseArgs } from 'node:util';
import { insertWebhook } from '../server/db/webhooks.js';
import type { Services } from '../server/services/context.js';
import { dispatchEvents } from '../server/services/events.js';
import { onScratchDatabase } from './scratch.js';

const { values } = parseArgs({ options: { batch: { type: 'string', default: '200' }, rounds: { type: 'string', default: '60' } } });
const batch = Number(values.batch);
const rounds = Number(values.rounds);
/** Rounds before these are not counted: the first statements of a connection and of the process are slower. */
const WARMUP_ROUNDS = 5;
await onScratchDatabase('repoadmin_numbering', async (db) => {
  // A published record as the publish trigger writes it into the event's data.
  const record = (i: number) => ({
    uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, project_name: 'bench', branch: 'main', group_id: 'com.example.bench',
    artifact_id: `artifact-${i % 50}`, version: `1.0.${i}`, repository_url: 'https://git.example.com/bench/artifact.git',
    creation_date: new Date().toISOString(), type: 'release', latest_version: i % 2 === 0, description: 'A build of the benchmark.',
    provenance: null, veto_reason: null, veto_by: null, veto_at: null,
  });
  const measure = async (label: string) => {
    let cpuUs = 0;
    let wallMs = 0;
    let numbered = 0;
    for (let round = 0; round < rounds + WARMUP_ROUNDS; round++) {
      const rows = Array.from({ length: batch }, (_, k) => ({ type: 'version.published', project_name: 'bench', data: JSON.stringify({ record: record(round * batch + k), created: true }) }));
      await db('events').insert(rows);
      const cpu = process.cpuUsage();
      const started = performance.now();
      const count = await dispatchEvents({ db } as Services, { wait: true });
      if (round < WARMUP_ROUNDS) continue;
      const used = process.cpuUsage(cpu);
      cpuUs += used.user + used.system;
      wallMs += performance.now() - started;
      numbered += count;
    }
    process.stdout.write(`| ${label} | ${batch} | ${numbered.toLocaleString('en')} | ${(cpuUs / numbered).toFixed(1)} | ${((wallMs * 1000) / numbered).toFixed(1)} |\n`);
  };
  process.stdout.write('| webhooks | events a round | events numbered | CPU µs an event | wall µs an event |\n|---|--:|--:|--:|--:|\n');
  await measure('none');
  await insertWebhook(db, { url: 'http://127.0.0.1:9/hook', events: ['version.deleted'], projects: null, description: null, active: true }, 'whsec_bench');
  await measure('one, wanting none of them');
});
