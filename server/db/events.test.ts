// Numbering events (events.ts, sequenceEvents, and each kind's numberEvents) on every database kind:
// in id order from the last number, an event still being written skipped and numbered after its
// commit, and an event's data read only for the events asked for.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dbKinds, openMigratedDatabase } from '../../test/helpers/db.js';
import type { Database } from './connect.js';
import { appendEvent, eventsWithData, lastSeq, sequenceEvents } from './events.js';

describe.each(dbKinds())('numbering events on %s', (kind) => {
  let database: Database;

  beforeAll(async () => {
    database = await openMigratedDatabase(kind);
  }, 120_000);

  afterAll(async () => {
    await database?.close();
  });

  beforeEach(async () => {
    // Whatever the migrations or an earlier test left is numbered first.
    await database.db.transaction((trx) => sequenceEvents(trx, { wait: true, limit: 10_000 }));
  });

  const append = (n: number) => appendEvent(database.db, 'test.event', { n, text: 'x'.repeat(n) }, n % 2 ? 'odd' : null);
  const number = (limit?: number) => database.db.transaction((trx) => sequenceEvents(trx, { wait: true, limit }));

  it('numbers the committed events in id order from the last number, up to the limit, without their data', async () => {
    const before = await lastSeq(database.db);
    for (let n = 1; n <= 7; n++) await append(n);
    const first = await number(5);
    const second = await number(5);
    const numbered = [...first, ...second];
    expect(first).toHaveLength(5);
    expect(second).toHaveLength(2);
    expect(numbered.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7].map((i) => before + i));
    const ids = numbered.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(numbered.map((e) => [e.type, e.projectName])).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => ['test.event', n % 2 ? 'odd' : null]));
    expect(numbered.some((e) => 'data' in e || 'createdAt' in e)).toBe(false);
    expect(await lastSeq(database.db)).toBe(before + 7);
    // The stored numbers are the ones answered.
    const stored = await database.db('events').select('id', 'seq').whereIn('id', ids).orderBy('id');
    expect(stored.map((row: { seq: unknown }) => Number(row.seq))).toEqual(numbered.map((e) => e.seq));
    expect(await number()).toEqual([]);
  });

  it('reads the data of the events asked for, in their order', async () => {
    for (let n = 1; n <= 4; n++) await append(n);
    const numbered = await number();
    const asked = [numbered[3]!, numbered[1]!];
    const withData = await eventsWithData(database.db, asked);
    const stored = await database.db('events').select('id', 'created_at').whereIn('id', [asked[0]!.id, asked[1]!.id]);
    const at = (id: number) => new Date(stored.find((row: { id: unknown }) => Number(row.id) === id).created_at).getTime();
    expect(withData.map((e) => e.createdAt.getTime())).toEqual([at(asked[0]!.id), at(asked[1]!.id)]);
    expect(withData.map((e) => [e.id, e.seq, e.data])).toEqual([
      [asked[0]!.id, asked[0]!.seq, { n: 4, text: 'xxxx' }],
      [asked[1]!.id, asked[1]!.seq, { n: 2, text: 'xx' }],
    ]);
  });

  // PGlite has one connection: no transaction writes while another numbers.
  if (kind === 'pglite') return;
  it('skips an event an open transaction is writing, and numbers it after its commit, after those numbered before', async () => {
    const before = await lastSeq(database.db);
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    let written!: () => void;
    const isWritten = new Promise<void>((resolve) => (written = resolve));
    const open = database.db.transaction(async (trx) => {
      await appendEvent(trx, 'test.late', { late: true });
      written();
      await committed;
    });
    await isWritten;
    await append(1);
    const first = await number();
    expect(first.map((e) => [e.type, e.seq])).toEqual([['test.event', before + 1]]);
    commit();
    await open;
    const second = await number();
    expect(second.map((e) => [e.type, e.seq])).toEqual([['test.late', before + 2]]);
    expect(second[0]!.id).toBeLessThan(first[0]!.id);
  });
});
