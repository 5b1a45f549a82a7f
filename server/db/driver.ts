// What opening a database server needs whatever its kind: the driver module the user supplies,
// handed to knex's client through its public API, the connections knex's pool must not hand out
// again, and knex's own messages kept off the console. What each kind asks of its driver itself is
// in server/db/dialects/pg-driver.ts and server/db/dialects/mysql2-driver.ts.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { AppError } from '../../common/errors.js';

const require = createRequire(import.meta.url);

/**
 * knex's own messages ("Acquire connection error" with a stack, "Connection Error") go to the
 * console once per failed connection: during an outage that is a stack trace per request. The
 * failure reaches the request that met it, and the outage is logged once (server/db/outage.ts).
 */
export const QUIET = { warn() {}, error() {}, debug() {}, deprecate() {} };

/**
 * Loads a driver module: from the driver folder first, then from the working directory, then from
 * the server's own modules (only `pg` is bundled).
 */
export function loadDriver(name: string, driverPath: string | undefined): unknown {
  const folders: string[] = [];
  if (driverPath) {
    const folder = path.resolve(driverPath);
    if (!fs.existsSync(folder)) {
      throw new AppError('usage', `the driver folder ${folder} does not exist (--repoadmin_db_driver_path / REPO_MAN_DB_DRIVER_PATH)`);
    }
    const direct = path.join(folder, name);
    if (fs.existsSync(direct)) return require(direct);
    folders.push(folder);
  }
  folders.push(process.cwd());
  for (const folder of folders) {
    try {
      return require(require.resolve(name, { paths: [folder] }));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    }
  }
  try {
    return require(name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new AppError(
      'usage',
      `the database driver "${name}" is not installed (--repoadmin_db_driver / REPO_MAN_DB_DRIVER): run "npm install ${name}" in a folder and give that folder as --repoadmin_db_driver_path / REPO_MAN_DB_DRIVER_PATH`,
    );
  }
}

/**
 * The connections of one pool that must not be handed out again: their socket was closed by the
 * client-side timeout, or their server went away (server/db/dialects/pg-driver.ts). knex's pool
 * asks `usable` before it hands out a free connection (its public `pool.validate` option: knex 3.3
 * calls it after its own checks, `userValidate` in lib/client.js getPoolSettings) and destroys one
 * that is not; the pool then opens a new one.
 */
export interface ConnectionMarks {
  /** Marks a connection useless. */
  mark(connection: object): void;
  /** Marks a connection useless after an error that made it so: true, and counted, unless it already was. */
  drop(connection: object): boolean;
  /** False for a marked connection. */
  usable(connection: object): boolean;
  /** How many connections `drop` took out, for /metrics (repoadmin_db_connections_dropped_total). */
  readonly dropped: number;
}

export function connectionMarks(): ConnectionMarks {
  const useless = new WeakSet<object>();
  let dropped = 0;
  return {
    mark: (connection) => void useless.add(connection),
    drop(connection) {
      if (useless.has(connection)) return false;
      useless.add(connection);
      dropped++;
      return true;
    },
    usable: (connection) => !useless.has(connection),
    get dropped() {
      return dropped;
    },
  };
}

/**
 * knex's client class for `name` ('pg', 'mysql2') that uses `driver`, the module the user supplies
 * (loadDriver), rather than the one knex itself would require. Through knex 3.x's public client API
 * (types/index.d.ts, `class Client`): knex called with a client name and no connection only picks
 * that class (it loads no driver and opens no pool), and the client's constructor calls
 * `initializeDriver()` to set `driver`, before any connection exists; every connection is then made
 * by `driver`. A knex whose client stopped calling it would load its own module and fail to start
 * without one in reach (test/ship/archive.test.ts, mysql2 from the driver folder), or run without
 * our driver's bounds (server/db/driver.test.ts).
 *
 * The count of connections dropped after an error (`marks`) is the client's too, for /metrics.
 */
export function knexClientWithDriver(name: 'pg' | 'mysql2', driver: unknown, marks: ConnectionMarks): typeof Knex.Client {
  const KindClient = (knexFactory({ client: name }).client as Knex.Client).constructor as typeof Knex.Client;
  return class ClientWithDriver extends KindClient {
    override initializeDriver(): void {
      this.driver = driver;
    }

    get droppedConnections(): number {
      return marks.dropped;
    }
  };
}
