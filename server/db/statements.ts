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
/** Per dialect and shape. */
const shapes = new Map<string, Statement>();

/**
 * The rows of the statement whose shape is `shape`: `build` writes its SQL with `?` placeholders,
 * the first time only; `values` fill them, in their order.
 */
export async function cachedRows(db: Db, shape: string, values: unknown[], build: () => string): Promise<Record<string, unknown>[]> {
  const dialect = dialectOf(db);
  const key = `${dialect.name}:${shape}`;
  let statement = shapes.get(key);
  if (statement === undefined) {
    const sql = build();
    const kept = shapes.size < MAX_SHAPES;
    statement = { sql, native: dialect.native(sql), name: kept ? `repoadmin_${shapes.size + 1}` : undefined };
    if (kept) shapes.set(key, statement);
  }
  return dialect.runStatement(db, statement, values);
}

/** How many shapes this process keeps, of every dialect and database it has opened. */
export const keptShapes = (): number => shapes.size;
