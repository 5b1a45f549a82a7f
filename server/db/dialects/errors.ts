// What a driver error means, whichever kind's driver raised it. An error does not say which
// database it came from, and the kinds' codes do not overlap (five-character SQLSTATE strings from
// PostgreSQL and PGlite, numeric errno from MariaDB and MySQL, each kind's network failures by the
// driver's own names), so each kind's classifier is asked in turn.
import type { ErrorClass } from './index.js';
import { classifyMysqlError } from './mysql.js';
import { classifyPostgresError } from './postgres.js';

/** Database unreachable, worth retrying (deadlock, lock timeout), unique key clash, or undefined: nothing special. */
export function classifyDriverError(error: unknown): ErrorClass | undefined {
  return classifyPostgresError(error) ?? classifyMysqlError(error);
}
