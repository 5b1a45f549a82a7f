// The suite on busy cores: `npm run test:stress [-- --runs N]` runs the README's test command with a
// CPU-bound process on one core beside it, N times in a row (default 1), and stops at the first
// failure. Each run's time is printed; the slowest twenty files of the last run, and whether it
// passed, are written to docs/test-durations.md, so that anyone can see where the suite's time goes.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '1' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('--runs takes a whole number from 1 up');
  process.exit(2);
}

/** Spins one core, pinned to the last one where taskset is there, until killed. */
function startBusyCore() {
  const spin = [process.execPath, '-e', 'for (;;) {}'];
  const core = String(os.availableParallelism() - 1);
  const tasksetThere = existsSync('/usr/bin/taskset');
  const [command, ...args] = tasksetThere ? ['taskset', '-c', core, ...spin] : spin;
  return spawn(command, args, { stdio: 'ignore' });
}

/** One run of `npm test` with a JSON report beside the usual one; resolves with its exit code and time. */
function runSuite(report) {
  const started = performance.now();
  const child = spawn('npm', ['test', '--', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], {
    cwd: root,
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), seconds: (performance.now() - started) / 1000 })));
}

function writeDurations(report, seconds, passed) {
  const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
  const files = testResults
    .map((file) => ({ name: path.relative(root, file.name), seconds: (file.endTime - file.startTime) / 1000, tests: file.assertionResults.length }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 20);
  const rows = files.map((file) => `| \`${file.name}\` | ${file.seconds.toFixed(1)} | ${file.tests} |`);
  const text = [
    '# Where the suite spends its time',
    '',
    'Written by `npm run test:stress` (scripts/stress.mjs) from its last run: the suite with a',
    'CPU-bound process on one core beside it, on the machine named below. A file\'s time runs from its',
    'first test to its last, while three other files run beside it (docs/testing.md).',
    '',
    `Run of ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.availableParallelism()} cores: the whole run took ${Math.round(seconds)} s and ${passed ? 'passed' : 'FAILED'}.`,
    '',
    '| file | seconds | tests |',
    '|---|--:|--:|',
    ...rows,
    '',
  ].join('\n');
  writeFileSync(path.join(root, 'docs', 'test-durations.md'), text);
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'repoadmin-stress-'));
const busy = startBusyCore();
const stopBusy = () => busy.kill('SIGKILL');
process.on('exit', stopBusy);
let failed = false;
try {
  for (let run = 1; run <= runs; run++) {
    const report = path.join(dir, `run-${run}.json`);
    const { code, seconds } = await runSuite(report);
    console.log(`== stress: run ${run} of ${runs} ${code === 0 ? 'passed' : 'FAILED'} in ${Math.round(seconds)} s`);
    if (existsSync(report)) writeDurations(report, seconds, code === 0);
    if (code !== 0) {
      failed = true;
      break;
    }
  }
} finally {
  stopBusy();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
