// The one place where the server speaks to `mysql2` itself rather than through knex
// (docs/architecture.md, "The database layer"), through mysql2's public API: `createConnection`,
// which knex uses to open each connection, and the connection's `query`. Every statement on a
// connection is bounded on the client side, as on PostgreSQL (pg-driver.ts).
import { type Answer, boundAnswer } from '../client-timeout.js';
import type { ConnectionMarks } from '../driver.js';

/** The parts of a `mysql2` connection used here. */
interface Mysql2Connection {
  query(sql: unknown, values?: unknown, callback?: Answer<unknown>): unknown;
  destroy(): void;
}

interface Mysql2Module {
  createConnection(settings: unknown): Mysql2Connection;
}

/**
 * `driver` (the `mysql2` module the user supplies) whose connections bound every statement sent
 * with a callback (knex sends them so) by `limitMs`: past it the statement fails with
 * CLIENT_TIMEOUT, the connection is marked useless and destroyed, as its state is unknown. mysql2
 * documents `createConnection`, not its Connection class's constructor: the bounded `query` is the
 * connection's own, set on each connection made. A statement sent without a callback (a stream)
 * is not bounded; the server sends none.
 */
export function boundMysql2(driver: unknown, limitMs: number, marks: ConnectionMarks): unknown {
  const mysql2 = driver as Mysql2Module;

  function createConnection(settings: unknown): Mysql2Connection {
    const connection = mysql2.createConnection(settings);
    const query = connection.query;
    connection.query = function boundQuery(sql, values, callback): unknown {
      if (typeof values === 'function') return boundQuery.call(connection, sql, undefined, values as Answer<unknown>);
      if (!callback) return query.call(connection, sql, values);
      const answer = boundAnswer(limitMs, callback, () => {
        marks.mark(connection);
        connection.destroy();
      });
      return query.call(connection, sql, values, answer);
    };
    return connection;
  }

  return Object.create(mysql2, { createConnection: { value: createConnection, enumerable: true } });
}
