// `npm run bench:webhooks`: the webhook part of `npm run bench` alone (webhook-load.ts), written to
// bench/results/<date>-webhooks-<records>.md.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KEYS } from './dataset.js';
import { killChildren } from './processes.js';
import { measureWebhooks } from './webhook-load.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    paced: { type: 'string', default: '20' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(`npm run bench:webhooks -- [--records N] [--seconds S] [--rounds R] [--connections C] [--paced P]
  PostgreSQL: REPOADMIN_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres); a database of
  its own is made there and dropped at the end. Writes bench/results/<date>-webhooks-<records>.md.\n`);
  process.exit(0);
}
const options = {
  pgUrl: new URL(process.env.REPOADMIN_BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres'),
  records: Number(values.records),
  seconds: Number(values.seconds),
  rounds: Number(values.rounds),
  connections: Number(values.connections),
  paced: Number(values.paced),
};
if (!(options.records >= KEYS) || !(options.seconds >= 1) || !(options.rounds >= 1) || !(options.connections >= 1) || !(options.paced >= 1)) {
  throw new Error(`--records must be at least ${KEYS}, --seconds, --rounds, --connections and --paced at least 1`);
}

try {
  const result = await measureWebhooks(options, (line) => process.stderr.write(`${line}\n`));
  const date = new Date().toISOString().slice(0, 10);
  const text = `# Webhooks (${date}, Node ${process.version})\n\n${result.markdown}`;
  writeFileSync(new URL(`results/${date}-webhooks-${options.records}.md`, import.meta.url), text);
  process.stdout.write(text);
  process.stderr.write(`written: bench/results/${date}-webhooks-${options.records}.md\n`);
  if (result.errors > 0) process.exitCode = 1;
} finally {
  killChildren();
}
