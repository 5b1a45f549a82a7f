// The one statement cache: the hot queries (a search, the latest lookup, a record by uid, a token
// or user lookup) and the publish statement, each built once per shape. A query's SQL depends only
// on its shape (which filters it has and how, its order, whether it skips rows); the request only
// computes its values. The dialect runs the SQL as a named prepared statement where the driver has
// them (server/db/dialects).
import { type Db, type Statement, dialectOf } from './dialects/index.js';

/**
 * Shapes kept; past this many, new shapes are built on each request and sent unnamed, so that a
 * connection's prepared statements stay as many as the kept shapes.
 */
export const MAX_SHAPES = 1_000;

export interface StatementCache {
  /**
   * The rows of the statement whose shape is `shape`: `build` writes its SQL with `?` placeholders,
   * the first time only; `values` fill them, in their order.
   */
  rows(db: Db, shape: string, values: unknown[], build: () => string): Promise<Record<string, unknown>[]>;
  /** How many shapes it keeps, of every dialect and database it has run on. */
  kept(): number;
}

/**
 * A cache of at most `maxShapes` shapes, per dialect and shape, whose prepared statements are named
 * `<prefix><n>`. The process has one (below); a test of the limit makes a small one of its own
 * rather than filling the process's.
 */
export function statementCache(maxShapes: number, prefix: string): StatementCache {
  const shapes = new Map<string, Statement>();
  return {
    rows(db, shape, values, build) {
      const dialect = dialectOf(db);
      const key = `${dialect.name}:${shape}`;
      let statement = shapes.get(key);
      if (statement === undefined) {
        const sql = build();
        const kept = shapes.size < maxShapes;
        statement = { sql, native: dialect.native(sql), name: kept ? `${prefix}${shapes.size + 1}` : undefined };
        if (kept) shapes.set(key, statement);
      }
      return dialect.runStatement(db, statement, values);
    },
    kept: () => shapes.size,
  };
}

const processCache = statementCache(MAX_SHAPES, 'repoadmin_');

/** The rows of a statement of the process's cache (StatementCache.rows). */
export const cachedRows: StatementCache['rows'] = processCache.rows;
