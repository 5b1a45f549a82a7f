import { main } from '../cli/main.js';
import { createDeps } from '../cli/deps.js';

const code = await main(process.argv, createDeps());
if (code !== 0 || process.exitCode === undefined) process.exitCode = code;
