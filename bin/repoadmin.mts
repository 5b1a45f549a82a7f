import { main } from '../cli/main.js';
import { createDeps } from '../cli/deps.js';

// A reader that stops early (`repoadmin search | head -1`) is not a failure of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

// Built as CommonJS (scripts/build.mjs), which has no top-level await.
void (async () => {
  process.exitCode = await main(process.argv, createDeps());
  // Leave as soon as the command is done: fetch keeps its idle connection open for a while after
  // the last answer, which would add a tenth of a second to every pipeline step.
  const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write('', () => resolve()));
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit();
})();
