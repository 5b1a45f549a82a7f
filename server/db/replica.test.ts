// A write's position (replica.ts, sharedAfterCall and positionAfterCommit): each caller gets the
// answer of a read sent after its call, and callers that arrive while a read is under way share the
// next one. First with reads the test ends by hand, then on a real PostgreSQL under parallel writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgAvailable, openMigratedDatabase } from '../../test/helpers/db.js';
import type { Database } from './connect.js';
import { currentPosition, parsePosition, positionAfterCommit, sharedAfterCall } from './replica.js';

/** Reads the test ends by hand, in the order it chooses. */
function handReads() {
  const sent: { answer: (value: number) => void; fail: (error: Error) => void }[] = [];
  const read = () =>
    new Promise<number>((answer, fail) => {
      sent.push({ answer, fail });
    });
  return { sent, read: sharedAfterCall(read) };
}

/** Lets every settled read's callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a read shared by the callers that wait for it', () => {
  it('sends a read at once for a call while none is under way, and answers it with that read', async () => {
    const { sent, read } = handReads();
    const first = read();
    expect(sent).toHaveLength(1);
    sent[0]!.answer(1);
    await expect(first).resolves.toBe(1);
    const second = read();
    expect(sent).toHaveLength(2);
    sent[1]!.answer(2);
    await expect(second).resolves.toBe(2);
  });

  it('never answers a call with a read sent before it: calls during a read share the next one', async () => {
    const { sent, read } = handReads();
    const first = read();
    const during = [read(), read(), read()];
    // Nothing more is sent while the first read is under way.
    await settle();
    expect(sent).toHaveLength(1);
    sent[0]!.answer(1);
    await expect(first).resolves.toBe(1);
    await settle();
    expect(sent).toHaveLength(2);
    // A call while the shared read is under way waits for the one after it.
    const later = read();
    sent[1]!.answer(2);
    expect(await Promise.all(during)).toEqual([2, 2, 2]);
    await settle();
    expect(sent).toHaveLength(3);
    sent[2]!.answer(3);
    await expect(later).resolves.toBe(3);
  });

  it('answers the callers of a failed read with its error, and the next call sends a new read', async () => {
    const { sent, read } = handReads();
    const first = read();
    const during = read();
    sent[0]!.fail(new Error('gone'));
    await expect(first).rejects.toThrow('gone');
    await settle();
    sent[1]!.fail(new Error('still gone'));
    await expect(during).rejects.toThrow('still gone');
    await settle();
    const after = read();
    expect(sent).toHaveLength(3);
    sent[2]!.answer(3);
    await expect(after).resolves.toBe(3);
  });
});

describe.runIf(pgAvailable())('the position after a write, on PostgreSQL', () => {
  let database: Database;

  beforeAll(async () => {
    database = await openMigratedDatabase('postgres');
    await database.db.raw('create table writes (n integer)');
  });

  afterAll(async () => {
    await database?.close();
  });

  it('answers each of many parallel writes with a position at or past its commit, in two statements', async () => {
    const writes = 64;
    let calls = 0;
    let allCalled!: () => void;
    const gate = new Promise<void>((resolve) => (allCalled = resolve));
    let statements = 0;
    // The first statement is held until every write has asked: the others all arrive while it is
    // under way, so they must share the one sent after it.
    const shared = sharedAfterCall(async () => {
      statements++;
      await gate;
      return currentPosition(database.db);
    });
    const results = await Promise.all(
      Array.from({ length: writes }, async (_, n) => {
        // The position the write's own WAL had reached just before its commit, read in its transaction.
        const before = await database.db.transaction(async (trx) => {
          await trx('writes').insert({ n });
          const [row] = (await trx.raw('select pg_current_wal_insert_lsn()::text as at')).rows as { at: string }[];
          return parsePosition(row!.at)!;
        });
        const position = shared();
        if (++calls === writes) allCalled();
        return { before, after: parsePosition(await position)! };
      }),
    );
    for (const { before, after } of results) expect(after).toBeGreaterThanOrEqual(before);
    expect(statements).toBe(2);
  });

  it('reads the server\'s position after its writes as a WAL position, never going back', async () => {
    const first = parsePosition(await positionAfterCommit(database.db))!;
    await database.db('writes').insert({ n: -1 });
    const [a, b] = await Promise.all([positionAfterCommit(database.db), positionAfterCommit(database.db)]);
    expect(parsePosition(a)! > first).toBe(true);
    expect(parsePosition(b)! >= parsePosition(a)!).toBe(true);
  });
});
