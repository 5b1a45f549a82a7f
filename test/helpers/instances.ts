// Several server processes on one database: the environment that points `repoadmin server` at a
// test database, and the processes' own children (the workers of --workers).
import { execFileSync } from 'node:child_process';
import type { ServerConfig } from '../../server/config.js';

/** The REPO_MAN_DB_* variables of a PostgreSQL or MariaDB/MySQL test database. */
export function databaseEnv(settings: ServerConfig['db']): Record<string, string> {
  return {
    REPO_MAN_DB_JDBC: settings.kind === 'mysql' ? 'mariadb' : 'postgres',
    REPO_MAN_DB_HOST: settings.host,
    REPO_MAN_DB_PORT: String(settings.port),
    REPO_MAN_DB_USER: settings.user,
    REPO_MAN_DB_PASS: settings.password,
    REPO_MAN_DB_DATABASE: settings.database,
  };
}

/** The pids of a process's children (none once it has none). */
export function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `check` holds, asking every `everyMs`; how long it took, or a failure after `limitMs`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, limitMs: number, everyMs = 100): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(everyMs);
  }
  return Date.now() - started;
}
