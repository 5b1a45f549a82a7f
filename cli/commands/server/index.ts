// `repoadmin server`: runs the registry server until SIGTERM or SIGINT.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

export function register(program: Command, deps: Deps): void {
  program
    .command('server')
    .summary('run the registry server')
    .description(
      'Run the registry server (default port 9090, embedded database).\n' +
        'Settings come from --repoadmin_* arguments and REPO_MAN_* variables; see the README.',
    )
    .usage('[--port N] [--repoadmin_<setting> VALUE ...]')
    .addHelpText('after', '\nExample:\n  repoadmin server --port 9090 --repoadmin_db_jdbc postgres --repoadmin_db_host db.internal')
    .allowUnknownOption()
    .helpOption('-h, --help', 'show help')
    .argument('[settings...]')
    .action(async (settings: string[]) => {
      // Before the server's modules load: the young generation stays small for the embedded
      // database, and grows again on a database server (server/memory.ts).
      const { keepYoungGenerationSmall } = await import('../../../server/memory.js');
      keepYoungGenerationSmall();
      const { runServer } = await import('../../../server/main.js');
      process.exitCode = await runServer(settings, deps.env, deps.io);
    });
}
