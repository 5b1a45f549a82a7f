// Starting the server (the built bin/repoadmin) as a newcomer does: a port that is taken stops the
// start before any database folder is made, and the first-start hint names the command line the
// way this server was started (each way: cli/commands/server/server.test.ts).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, cleanEnv, run, embeddedDataDir, startServerProcess, tempDir } from '../helpers/process.js';

const FAST = { REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn' };

/** The environment of a server, without what npm sets for the scripts it runs (npm test sets it here). */
function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = cleanEnv({ ...FAST, ...extra });
  for (const name of Object.keys(env)) if (name.startsWith('npm_') && !(name in extra)) delete env[name];
  return env;
}

/** A PATH without any `repoadmin` on it. */
const PLAIN_PATH = path.dirname(process.execPath) + path.delimiter + '/usr/bin:/bin';

describe('starting the server', () => {
  const running: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop('SIGKILL')));
  });

  it('stops on a taken port before it creates the embedded database folder', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const dataDir = path.join(tempDir(), 'new-folder');
    try {
      const result = await run(['server', '--port', String(port)], serverEnv({ REPO_MAN_DATA_DIR: dataDir }));
      expect(result.code).not.toBe(0);
      expect(result.stderr).toBe(`error: port ${port} is already in use; choose another with --port / REPO_MAN_PORT\n`);
      expect(fs.existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  const hint = (cli: string, url: string) => `  ${cli} login --url ${url.replace('127.0.0.1', 'localhost')} --username admin && ${cli} user passwd\n`;

  it('names `npx repoadmin` in the first-start hint when started through npm from a checkout', async () => {
    const server = await startServerProcess([], serverEnv({ REPO_MAN_DATA_DIR: embeddedDataDir(), PATH: PLAIN_PATH, npm_command: 'start' }));
    running.push(server);
    expect(server.stderr()).toContain(hint('npx repoadmin', server.url));
    expect(await server.stop()).toBe(0);
  });
});
