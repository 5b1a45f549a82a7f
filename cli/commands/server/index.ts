// `repoadmin server`: runs the registry server until SIGTERM or SIGINT.
import type { Command, Help } from 'commander';
import { SETTINGS } from '../../../server/settings.js';
import type { Deps } from '../../deps.js';
import { cliInvocation } from '../../invocation.js';

/** Every setting of the server with its variables and default, wrapped to the help's width. */
function settingsHelp(helper: Help): string {
  const width = helper.helpWidth ?? 80;
  const indent = '      ';
  const entries = Object.values(SETTINGS).map((s) => {
    const description = helper.boxWrap(`${s.about}; default: ${s.default}`, width - indent.length);
    return `  --${s.arg}, ${s.env.join(' or ')}\n${description.replace(/^/gm, indent)}`;
  });
  return `\nSettings (argument, environment variable; the argument wins):\n${entries.join('\n')}`;
}

export function register(program: Command, deps: Deps): void {
  const server = program
    .command('server')
    .summary('run the registry server')
    .description('Run the registry server (default port 9090, embedded database). Each setting below is an argument (--name VALUE or --name=VALUE) or an environment variable.')
    .usage('[--port N] [--repoadmin_<setting> VALUE ...]')
    .allowUnknownOption()
    .helpOption('-h, --help', 'show help')
    .argument('[settings...]')
    .action(async (settings: string[]) => {
      // Before the server's modules load: the young generation stays small for the embedded
      // database, and grows again on a database server; PGlite's WebAssembly is compiled once, by
      // the baseline compiler, one function at a time (server/memory.ts).
      const { compileWebAssemblyOnce, compileWebAssemblyOneAtATime, keepYoungGenerationSmall } = await import('../../../server/memory.js');
      keepYoungGenerationSmall();
      compileWebAssemblyOneAtATime();
      compileWebAssemblyOnce();
      const { runServer } = await import('../../../server/main.js');
      const cli = cliInvocation(deps.env, process.argv[1] ?? 'repoadmin', process.cwd());
      await runServer(settings, deps.env, deps.io, { cli });
    });
  server.addHelpText('after', () => {
    const helper = server.createHelp();
    helper.prepareContext({ helpWidth: server.configureOutput().getOutHelpWidth?.() });
    return (
      settingsHelp(helper) +
      '\n\nExample:\n  repoadmin server --port 9090 --repoadmin_db_jdbc postgres \\\n    --repoadmin_db_host db.internal'
    );
  });
}
