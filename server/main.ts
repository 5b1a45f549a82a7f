// config -> database -> migrate -> app -> listen.
import type { Io } from '../cli/deps.js';

export async function runServer(args: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  io.err(`error: the server is not built yet (${args.length} settings, ${Object.keys(env).length} variables)`);
  return 1;
}
