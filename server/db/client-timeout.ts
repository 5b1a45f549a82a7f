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
