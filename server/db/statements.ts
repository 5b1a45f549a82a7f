// The read queries built once per shape. A search's SQL depends only on which filters it has and
// how (exact or wildcard), its order and whether it skips rows: its shape. knex builds the SQL the
// first time a shape is seen; after that the request only computes its values, and the dialect runs
// the SQL as a named prepared statement where the driver has them (server/db/dialects).
import type { Knex } from 'knex';
import { type Db, dialectOf } from './dialects/index.js';

export interface Statement {
  /** With `?` placeholders, as knex.raw takes it. */
  sql: string;
  /** With the driver's own placeholders (`$1` for PostgreSQL). */
  native: string;
  /** Unique per SQL text: the prepared statement's name on each connection. */
  name: string;
}

/**
 * Shapes kept; past this many, new shapes are built by knex on each request and sent unnamed, so
 * that a connection's prepared statements stay as many as the kept shapes.
 */
export const MAX_SHAPES = 1_000;
/** Per dialect and shape: the statement, or null when its values did not come out as predicted. */
const shapes = new Map<string, Statement | null>();
let named = 0;

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

/**
 * The rows of the query `build` makes, whose shape is `shape` and whose values, in the order of
 * its placeholders, are `values`. The first time, the SQL knex builds is kept only when its values
 * are exactly `values`: a shape whose values were predicted wrongly is built by knex every time.
 */
export async function cachedRows(db: Db, shape: string, values: unknown[], build: () => Knex.QueryBuilder): Promise<Record<string, unknown>[]> {
  const dialect = dialectOf(db);
  const key = `${dialect.name}:${shape}`;
  let statement = shapes.get(key);
  if (statement === undefined) {
    const query = build();
    if (shapes.size >= MAX_SHAPES) return rowsOf(await query);
    const compiled = query.toSQL();
    statement = sameValues(compiled.bindings, values) ? { sql: compiled.sql, native: compiled.toNative().sql, name: `repoadmin_${++named}` } : null;
    shapes.set(key, statement);
    if (statement === null) return rowsOf(await query);
  }
  if (statement === null) return rowsOf(await build());
  return dialect.runStatement(db, statement, values);
}

/** knex answers `.first()` with one row or undefined. */
function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  return result ? [result as Record<string, unknown>] : [];
}
