// The one place that irons out driver differences in values: node-postgres gives bigint and
// count(*) as strings, PGlite as BigInt or number, mysql2 sums as strings.
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return Number(value);
  return 0;
}

export function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** A row that refers to one that is not there (SQLSTATE 23503; ER_NO_REFERENCED_ROW_2 on MariaDB and MySQL). */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === '23503' || code === 'ER_NO_REFERENCED_ROW_2' || code === 'ER_NO_REFERENCED_ROW';
}

/** A unique-constraint violation (SQLSTATE 23505; ER_DUP_ENTRY on MariaDB and MySQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === '23505' || code === 'ER_DUP_ENTRY';
}

/** The rows an update or delete touched: a number from pg and mysql2, a result object from PGlite. */
export function affectedCount(result: unknown): number {
  if (typeof result === 'number') return result;
  const r = result as { affectedRows?: number; rowCount?: number } | null;
  return r?.affectedRows ?? r?.rowCount ?? 0;
}
