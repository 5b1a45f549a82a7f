// `repoadmin server`: runs the registry server until SIGTERM or SIGINT.
import { realpathSync } from 'node:fs';
import path from 'node:path';
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

/**
 * How the person who started the server runs this command line, for the server's first-start hint:
 * `repoadmin` when that name on PATH is this installation; `npx repoadmin` when started through npm
 * (`npm start`, `npx repoadmin server`: npm sets npm_command) from a checkout, where the name is not
 * on PATH; else `node` and the path of this launcher.
 */
export function cliInvocation(env: NodeJS.ProcessEnv, launcher: string, cwd: string): string {
  const real = (file: string) => {
    try {
      return realpathSync(file);
    } catch {
      return undefined;
    }
  };
  const self = real(launcher);
  const onPath = (env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => real(path.join(dir, 'repoadmin')));
  if (self && onPath.includes(self)) return 'repoadmin';
  if (env.npm_command) return 'npx repoadmin';
  const relative = path.relative(cwd, launcher);
  return `node ${relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : launcher}`;
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
