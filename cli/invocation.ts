// How the person at the terminal runs this command line: the name hints give it.
import { realpathSync } from 'node:fs';
import path from 'node:path';

/**
 * How the person who started this process runs the command line, for hints that name a command (the
 * server's first-start message, login's "change the password"):
 * `repoadmin` when that name on PATH is this installation; `npx repoadmin` when started through npm
 * (`npm start`, `npx repoadmin server`: npm sets npm_command) from a checkout, where the name is not
 * on PATH; else `node` and the path of this launcher. The folders npm puts on PATH for what it runs
 * (`node_modules/.bin`, npx's own under `_npx`) do not count: they are gone once it has run.
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
  const npmAdded = (dir: string) => Boolean(env.npm_command) && /[\\/](?:node_modules[\\/]\.bin|_npx[\\/].*)$/.test(dir);
  const onPath = (env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !npmAdded(dir))
    .map((dir) => real(path.join(dir, 'repoadmin')));
  if (self && onPath.includes(self)) return 'repoadmin';
  if (env.npm_command) return 'npx repoadmin';
  const relative = path.relative(cwd, launcher);
  return `node ${relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : launcher}`;
}
