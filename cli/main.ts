// Builds the command tree and is the one place that turns errors into exit codes.
import { Command, CommanderError } from 'commander';
import { AppError, EXIT_CODE, isAppError } from '../common/errors.js';
import type { Deps } from './deps.js';
import { VERSION } from './version.js';

export interface CommandGroup {
  register(program: Command, deps: Deps): void;
}

/** Each top-level command, loaded only when it runs (or for the full help). */
const GROUPS: Record<string, () => Promise<CommandGroup>> = {
  server: () => import('./commands/server/index.js'),
  jobs: () => import('./commands/jobs/index.js'),
};

function firstOperand(args: string[]): string | undefined {
  return args.find((a) => !a.startsWith('-'));
}

export async function main(argv: string[], deps: Deps): Promise<number> {
  const args = argv.slice(2);
  const program = new Command('repoadmin')
    .description('A build-pipeline version registry: server, publishing, search and Jenkins jobs.')
    .version(VERSION, '--version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => deps.io.out(s.replace(/\n$/, '')),
      writeErr: (s) => deps.io.err(s.replace(/\n$/, '')),
    });

  const wanted = firstOperand(args);
  const names = wanted && GROUPS[wanted] ? [wanted] : Object.keys(GROUPS);
  for (const name of names) (await GROUPS[name]!()).register(program, deps);

  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    return exitCodeFor(error, deps);
  }
}

function exitCodeFor(error: unknown, deps: Deps): number {
  if (error instanceof CommanderError) {
    // Help and version are successful exits; everything else commander rejects is a usage error.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) return 0;
    return EXIT_CODE.usage;
  }
  if (isAppError(error)) {
    // An error without a message only carries an exit code (`jobs diff`: 6, changes pending).
    if (error.message) deps.io.err(`error: ${error.message}`);
    return EXIT_CODE[error.code];
  }
  const message = error instanceof Error ? error.message : String(error);
  deps.io.err(`error: ${message}`);
  return 1;
}

export { AppError };
