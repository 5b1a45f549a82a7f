// `repoadmin server`: runs the registry server until SIGTERM or SIGINT.
import type { Command, Help } from 'commander';
import { SETTINGS } from '../../../server/settings.js';
import type { Deps } from '../../deps.js';

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
      const { runServer } = await import('../../../server/main.js');
      process.exitCode = await runServer(settings, deps.env, deps.io);
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
