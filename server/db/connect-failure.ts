// The one line a failed first connection to a database server ends the start-up with: what went
// wrong and which setting to check. Each database kind tells its own error codes apart.
import type { ServerConfig } from '../config.js';

/** What a failed connection points at: the database's name, the login, or the address. */
export type ConnectProblem = 'database' | 'login' | 'address';

const SETTING_TO_CHECK: Record<ConnectProblem, string> = {
  database: '--repoadmin_db_database / REPO_MAN_DB_DATABASE',
  login: '--repoadmin_db_username, --repoadmin_db_password / REPO_MAN_DB_USER, REPO_MAN_DB_PASS',
  address: '--repoadmin_db_host, --repoadmin_db_port / REPO_MAN_DB_HOST, REPO_MAN_DB_PORT',
};

/** The reason of a socket error on the way to the server, if it is one of the common ones. */
export function networkReason(code: string | undefined): string | undefined {
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'unknown host';
  return undefined;
}

/** The first line of an error's message, for a reason no code explains. */
export function firstLine(error: unknown): string {
  return ((error as { message?: string } | null)?.message ?? String(error)).split('\n')[0]!;
}

export function connectFailure(server: string, config: ServerConfig['db'], reason: string, problem: ConnectProblem): string {
  const where = `${server} at ${config.host}:${config.port} (database ${config.database}, user ${config.user})`;
  return `cannot connect to ${where}: ${reason}; check ${SETTING_TO_CHECK[problem]}`;
}
