import { main } from '../cli/main.js';
import { createDeps } from '../cli/deps.js';

const code = await main(process.argv, createDeps());
if (code !== 0 || process.exitCode === undefined) process.exitCode = code;
// Leave as soon as the command is done: fetch keeps its idle connection open for a while after
// the last answer, which would add a tenth of a second to every pipeline step.
const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write('', () => resolve()));
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit();
