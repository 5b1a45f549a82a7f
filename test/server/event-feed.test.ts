// The feed's cursor and a transaction that commits late: an event whose row took a smaller id but
// committed after a reader had moved past a larger one is still read at the next call (issue 24,
// docs/webhooks.md, "The feed"). Two transactions open at once need a database server: the embedded
// database is one connection, on which a second writer waits for the first to end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvent } from '../../server/db/events.js';
import { feed } from '../../server/services/events.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const kinds = dbKinds().filter((kind) => kind !== 'pglite');

describe.each(kinds.length > 0 ? kinds : (['postgres'] as const))('the event feed on %s', (kind) => {
  if (kinds.length === 0) {
    it.skip('needs REPOADMIN_TEST_PG_URL or REPOADMIN_TEST_MYSQL_URL', () => {});
    return;
  }
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ kind });
  }, 180_000);
  afterAll(() => server?.close());

  /** The row id of the event with this mark, as another connection sees it: undefined before its commit. */
  const idOf = async (mark: string): Promise<number | undefined> => {
    const row = await server.db('events').select('id').where('data', 'like', `%"mark":"${mark}"%`).first();
    return row ? Number(row.id) : undefined;
  };

  it('never skips an event with a smaller id that committed after the cursor passed a larger one', async () => {
    let cursor = (await feed({ db: server.db }, { limit: 1000, wait: 0 })).next;
    for (let round = 0; round < 3; round++) {
      const late = await server.db.transaction();
      try {
        await appendEvent(late, 'retention.finished', { mark: `late-${round}` });
        await appendEvent(server.db, 'retention.finished', { mark: `early-${round}` });
        expect(await idOf(`late-${round}`)).toBeUndefined();

        const first = await feed({ db: server.db }, { after: cursor, limit: 1000, wait: 0 });
        expect(first.events.map((e) => e.data.mark)).toEqual([`early-${round}`]);
        cursor = first.next;
        await late.commit();
      } catch (error) {
        if (!late.isCompleted()) await late.rollback();
        throw error;
      }
      // The precondition of the case: the late event's row id is below the one the reader passed.
      expect(await idOf(`late-${round}`)).toBeLessThan((await idOf(`early-${round}`))!);

      const second = await feed({ db: server.db }, { after: cursor, limit: 1000, wait: 0 });
      expect(second.events.map((e) => e.data.mark)).toEqual([`late-${round}`]);
      cursor = second.next;
    }
    expect((await feed({ db: server.db }, { after: cursor, limit: 1000, wait: 0 })).events).toEqual([]);
  });
});
