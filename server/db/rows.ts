// The one place that irons out driver differences: node-postgres gives bigint and count(*) as
// strings, PGlite as BigInt or number.
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return Number(value);
  return 0;
}

export function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** A unique-constraint violation (SQLSTATE 23505), optionally of one named constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string; message?: string } | undefined;
  if (e?.code !== '23505') return false;
  return constraint === undefined || e.constraint === constraint || (e.message ?? '').includes(constraint);
}
