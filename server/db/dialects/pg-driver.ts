// The one place where the server speaks to `pg` itself rather than through knex (docs/architecture.md,
// "The database layer"), through pg's public API: its `Client` class, which knex uses to open each
// connection, and the client's `query`, given a submittable of our own for the cached statements
// (pg-rows.ts).
// - Every statement on a connection (knex's and ours) is bounded on the client side, and a
//   connection an error made useless is marked so that knex's pool does not hand it out again
//   (server/db/driver.ts, connectionMarks).
// - The cached statements run on a connection of knex's pool straight through `query`, as named
//   prepared statements: knex's own way to a statement merges its options into pg's config with
//   lodash's `assignIn` on every call, which cost a read as much CPU as the pool (bench/results/2026-11-23.md),
//   and pg's own Query describes the statement again on every run (bench/results/2026-11-29-statement-rows.md).
import knexFactory, { type Knex } from 'knex';
import { type Answer, boundAnswer } from '../client-timeout.js';
import type { ConnectionMarks } from '../driver.js';
import { type Fields, type RowsAnswer, StatementRows, type TypeParser } from './pg-rows.js';

/** An answer of `pg` to a statement. */
export interface PgResult {
  rows: Record<string, unknown>[];
}

/** A statement as `pg` takes it: a name makes it a prepared statement of the connection. */
export interface PgStatement {
  name?: string;
  text: string;
  values: unknown[];
}

/** The parts of a `pg` Client used here. */
interface PgClient {
  query(config: unknown, values?: unknown, callback?: Answer<PgResult>): unknown;
  on(event: 'error' | 'end', listener: () => void): unknown;
  /** The client's protocol connection; its socket is destroyed when a statement is not answered in time. */
  connection?: { stream?: { destroy(): void } };
}

interface PgModule {
  Client: new (settings: unknown) => PgClient;
  /** pg's conversion of a statement's value to what it sends (lib/utils.js, the valueMapper of its Query). */
  utils: { prepareValue(value: unknown): unknown };
}

/** A connection of a pool opened with boundPg's driver: it runs cached statements as StatementRows. */
interface RowsClient {
  rows(statement: PgStatement, answer: RowsAnswer): void;
}

/**
 * `driver` (the `pg` module the user supplies) whose Client bounds every statement by `limitMs`:
 * past it the statement fails with CLIENT_TIMEOUT, the connection is marked useless and its socket
 * destroyed, as its state is unknown. A statement that fails with an error after which `drops` says
 * the connection is useless (its server shut down, or is a replica now) marks it too, counted as
 * dropped unless it was already marked. A connection that ends or reports an error is marked as
 * well, as knex 3.3 marks it (lib/dialects/postgres/index.js, `_acquireOnlyConnection`).
 * Submittables given to `query` (query streams) are not bounded; the server's own, StatementRows
 * (pg-rows.ts), go through `rows`, which bounds them as every statement.
 */
export function boundPg(driver: unknown, limitMs: number, drops: (error: Error) => boolean, marks: ConnectionMarks): unknown {
  const pg = driver as PgModule;

  class BoundClient extends pg.Client {
    constructor(settings: unknown) {
      super(settings);
      this.on('error', () => marks.mark(this));
      this.on('end', () => marks.mark(this));
    }

    override query(config: unknown, values?: unknown, callback?: Answer<PgResult>): unknown {
      if (typeof values === 'function') return this.query(config, undefined, values as Answer<PgResult>);
      if (typeof (config as { submit?: unknown } | null)?.submit === 'function') return super.query(config, values, callback);
      if (!callback) {
        return new Promise<PgResult>((resolve, reject) => {
          this.query(config, values, (error, result) => (error ? reject(error) : resolve(result as PgResult)));
        });
      }
      return super.query(config, values, this.#bound(callback));
    }

    /** The descriptions of the statements this connection has run as StatementRows, by name. */
    readonly #described = new Map<string, Fields>();

    readonly #typeParser: TypeParser = (oid, format) => (this as unknown as { getTypeParser: TypeParser }).getTypeParser(oid, format);

    /** The rows of a cached statement (pg-rows.ts), bounded as every statement. */
    rows(statement: PgStatement, answer: RowsAnswer): void {
      super.query(new StatementRows(statement, this.#described, this.#typeParser, pg.utils.prepareValue, this.#bound(answer)));
    }

    #bound<T>(callback: Answer<T>): Answer<T> {
      const answer = boundAnswer(limitMs, callback, () => {
        marks.mark(this);
        this.connection?.stream?.destroy();
      });
      return (error, result) => {
        if (error && drops(error)) marks.drop(this);
        answer(error, result);
      };
    }
  }

  return Object.create(pg, { Client: { value: BoundClient, enumerable: true } });
}

/** knex's pool as its client's public `pool` holds it (a tarn Pool; knex 3.3 types/index.d.ts, `class Client`). */
interface TarnPool {
  acquire(): { promise: Promise<unknown> };
  release(resource: unknown): boolean;
}

/**
 * The rows of `statement` run on a connection of knex's pool (`client` is the knex client of a
 * database opened with boundPg's driver, not of a transaction), taken from and given back to the
 * pool itself (its client's public `pool`, tarn's `acquire()` and `release()`), bounded as every
 * statement. knex's `acquireConnection()` does the same in two more promises; a pool that has no
 * connection free in time fails as there (KnexTimeoutError), which answers 503.
 */
export function poolStatementRows(client: Knex.Client, statement: PgStatement): Promise<Record<string, unknown>[]> {
  const pool = client.pool as TarnPool | undefined;
  if (!pool) return Promise.reject(new Error('Unable to acquire a connection'));
  return pool.acquire().promise.then(
    (connection) =>
      new Promise((resolve, reject) => {
        const done: RowsAnswer = (error, rows) => {
          pool.release(connection);
          if (error) reject(error);
          else resolve(rows!);
        };
        try {
          (connection as RowsClient).rows(statement, done);
        } catch (error) {
          done(error as Error);
        }
      }),
    (error: unknown) => {
      throw isPoolTimeout(error) ? Object.assign(new knexFactory.KnexTimeoutError(ACQUIRE_TIMEOUT), { cause: error }) : error;
    },
  );
}

/** knex's own message for it (knex 3.3 lib/client.js, acquireConnection). */
const ACQUIRE_TIMEOUT = 'Knex: Timeout acquiring a connection. The pool is probably full. Are you missing a .transacting(trx) call?';

/** tarn's TimeoutError: no connection became free within the pool's acquireTimeoutMillis. */
function isPoolTimeout(error: unknown): boolean {
  return error instanceof Error && error.constructor.name === 'TimeoutError';
}
