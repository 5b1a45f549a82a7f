// The client's own bound on a statement: a database that silently stops answering (packets
// dropped, no reset) must not hold a request until TCP gives up (docs/api.md, "Faults").

/** The code of the error a statement gets when the database has not answered in time. */
export const CLIENT_TIMEOUT = 'REPOADMIN_DB_TIMEOUT';

/** `promise`, or a rejection with `error` after `ms` (the promise is left to settle on its own). */
export function within<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(error()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (reason: unknown) => {
        clearTimeout(timer);
        reject(reason);
      },
    );
  });
}

/**
 * `running`, a statement sent on `connection`, bounded by `limitMs`: past it the statement fails
 * with CLIENT_TIMEOUT, the connection is marked so knex's pool drops it (`__knex__disposed`), and
 * `destroy` closes its socket, whose state is unknown.
 */
export function boundStatement<T>(running: Promise<T>, connection: { __knex__disposed?: unknown }, limitMs: number, destroy: () => void): Promise<T> {
  return within(running, limitMs, () => {
    const error = Object.assign(new Error(`the database did not answer within ${limitMs} ms`), { code: CLIENT_TIMEOUT });
    connection.__knex__disposed = error;
    destroy();
    running.catch(() => {});
    return error;
  });
}
