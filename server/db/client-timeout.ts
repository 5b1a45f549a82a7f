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

/** A driver's callback for a statement's answer: an error, or none and the result (mysql2 adds the fields). */
export type Answer<T> = (error: Error | null, result?: T, ...more: unknown[]) => void;

/**
 * `answer`, the callback of a statement sent now, bounded by `limitMs`: it is called once, with the
 * database's answer, or past the bound with a CLIENT_TIMEOUT error once `giveUp` has run (which
 * marks the connection useless and closes its socket, whose state is unknown). An answer that
 * comes after the bound is dropped.
 */
export function boundAnswer<T>(limitMs: number, answer: Answer<T>, giveUp: () => void): Answer<T> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    const error = Object.assign(new Error(`the database did not answer within ${limitMs} ms`), { code: CLIENT_TIMEOUT });
    giveUp();
    answer(error);
  }, limitMs);
  return (error, result, ...more) => {
    if (timedOut) return;
    clearTimeout(timer);
    answer(error, result, ...more);
  };
}
