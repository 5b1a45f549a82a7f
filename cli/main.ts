// Builds the command tree and is the one place that turns errors into exit codes.
import type { Command } from 'commander';
import { AppError, EXIT_CODE, isAppError } from '../common/errors.js';
import type { Deps } from './deps.js';
import { printable } from './output/printable.js';
import { VERSION } from '../common/version.js';

export interface CommandGroup {
  register(program: Command, deps: Deps): void;
}

/** Each top-level command, loaded only when it runs (or for the full help). */
const GROUPS: Record<string, () => Promise<CommandGroup>> = {
  server: () => import('./commands/server/index.js'),
  jobs: () => import('./commands/jobs/index.js'),
  login: () => import('./commands/login/index.js'),
  logout: () => import('./commands/logout/index.js'),
  whoami: () => import('./commands/whoami/index.js'),
  token: () => import('./commands/token/index.js'),
  user: () => import('./commands/user/index.js'),
  publish: () => import('./commands/publish/index.js'),
  search: () => import('./commands/search/index.js'),
  webhook: () => import('./commands/webhook/index.js'),
  events: () => import('./commands/events/index.js'),
  audit: () => import('./commands/audit/index.js'),
  delete: () => import('./commands/delete/index.js'),
  trash: () => import('./commands/trash/index.js'),
  retention: () => import('./commands/retention/index.js'),
  trust: () => import('./commands/trust/index.js'),
  env: () => import('./commands/env/index.js'),
  promote: () => import('./commands/promote/index.js'),
  promotions: () => import('./commands/promotions/index.js'),
  veto: () => import('./commands/veto/index.js'),
};

/** The exit code of a command stopped by Ctrl-C (128 + SIGINT), as a shell reports it. */
export const EXIT_INTERRUPTED = 130;

/** Global options that take a value, so that their value is not taken for the command's name. */
const VALUE_OPTIONS = new Set(['--url', '--token']);

function firstOperand(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (VALUE_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

export async function main(argv: string[], deps: Deps): Promise<number> {
  const args = argv.slice(2);
  const wanted = firstOperand(args);
  if (!wanted && args.includes('--version')) {
    // Answered before anything else is loaded: scripts call it to check the tool is there.
    deps.io.out(VERSION);
    return 0;
  }
  const names = wanted && GROUPS[wanted] ? [wanted] : Object.keys(GROUPS);
  const groups = await Promise.all(names.map((name) => GROUPS[name]!()));
  // Loaded by now: every command is built with it.
  const { Command, CommanderError } = await import('commander');
  const program = new Command('repoadmin')
    .description('A build-pipeline version registry: server, publishing, search and Jenkins jobs.')
    .usage('<command> [options]')
    .helpOption('-h, --help', 'show help')
    .option('--url <url>', 'registry server address (env: REPOADMIN_URL)')
    .option('--token <token>', 'bearer token to send (env: REPOADMIN_TOKEN)')
    .option('--json', 'print the API answer as JSON')
    .option('--no-color', 'no colour, even on a terminal')
    .option('--quiet', 'print results only, no messages')
    .option('--verbose', 'log each request to stderr (tokens masked)')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  repoadmin login --url http://localhost:9090\n' +
        '  repoadmin publish --group com.acme --artifact app --version 1.2.3 --latest\n' +
        '  V=$(repoadmin search --group com.acme --artifact app --branch main \\\n      --latest --field version)',
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => deps.io.out(s.replace(/\n$/, '')),
      writeErr: (s) => deps.io.err(s.replace(/\n$/, '')),
      // `--password=secret` would otherwise be echoed whole into a pipeline's log.
      outputError: (s, write) => write(s.replace(/(unknown option '-[^'=]*)=[^']*'/g, "$1'")),
    })
    .hook('preAction', (_program, command) => {
      const options = command.optsWithGlobals<{ url?: string; token?: string; json?: boolean; color?: boolean; quiet?: boolean; verbose?: boolean }>();
      Object.assign(deps.settings, {
        url: options.url,
        token: options.token,
        json: Boolean(options.json),
        color: options.color === false ? false : undefined,
        quiet: Boolean(options.quiet),
        verbose: Boolean(options.verbose),
      });
    });

  // Only without a command: `publish --version 1.2.3` is the record's version, not ours.
  if (!wanted) program.version(VERSION, '--version', 'print the version');
  for (const group of groups) group.register(program, deps);

  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    return exitCodeFor(error, deps, CommanderError);
  }
}

function exitCodeFor(error: unknown, deps: Deps, CommanderError: typeof import('commander').CommanderError): number {
  if (error instanceof CommanderError) {
    // Help and version are successful exits; everything else commander rejects is a usage error.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) return 0;
    return EXIT_CODE.usage;
  }
  if (isAppError(error)) {
    // An error without a message only carries an exit code (`jobs diff`: 6, changes pending).
    // The server's words, shown as they are but for control characters.
    if (error.message) deps.io.err(`error: ${printable(error.message)}`);
    // The server's message usually joins its field errors already: list only what it leaves out.
    for (const field of error.details.errors ?? []) {
      const line = field.path ? `${field.path}: ${field.message}` : field.message;
      if (!error.message.includes(line)) deps.io.err(`  ${printable(line)}`);
    }
    return EXIT_CODE[error.code];
  }
  if (error instanceof Error && error.name === 'ExitPromptError') {
    // Ctrl-C at a prompt: the shell's code for an interrupted command (128 + SIGINT).
    deps.io.err('error: cancelled');
    return EXIT_INTERRUPTED;
  }
  const message = error instanceof Error ? error.message : String(error);
  deps.io.err(`error: ${message}`);
  return 1;
}

export { AppError };
