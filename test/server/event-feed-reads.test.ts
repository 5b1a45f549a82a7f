// Reading the event feed writes nothing (docs/webhooks.md, "The feed"): GET /v1/events leaves every
// row of the events, their numbering and the deliveries as they were (on PostgreSQL and PGlite not
// even a row lock), and the feed answers through a connection that may only read, waiting for the
// outbox to number what committed before it asked.
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvent } from '../../server/db/events.js';
import { feed } from '../../server/services/events.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('the event feed only reads on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
  }, 180_000);
  afterAll(() => server?.close());

  /** What a write to the feed's tables would change: their rows, and on PostgreSQL kinds the numbering row's locks too. */
  async function fingerprint(): Promise<unknown[]> {
    const db = server.db;
    const rows: unknown[] = [
      await db('events').count({ n: '*' }).sum({ seqs: 'seq' }).max({ id: 'id' }),
      await db('event_sequence').select('name', 'last_seq'),
      await db('deliveries').count({ n: '*' }),
    ];
    if (kind !== 'mysql') rows.push((await db.raw('select xmin::text as xmin, xmax::text as xmax from event_sequence')).rows);
    return rows;
  }

  it('GET /v1/events changes no row and takes no lock, and answers as before', async () => {
    const record = { projectName: 'reads', branch: 'main', artifact: { groupId: 'reads', artifactId: 'lib', version: '1.0.0' }, latestVersion: true };
    expect((await server.request('POST', '/v1/repositories', { token: admin, body: record })).status).toBe(201);
    const first = await server.request('GET', '/v1/events?limit=1000', { token: admin });
    expect(first.body.events.map((e: { type: string }) => e.type)).toEqual(['version.published', 'latest.moved']);

    const before = await fingerprint();
    const again = await server.request('GET', '/v1/events?limit=1000', { token: admin });
    const filtered = await server.request('GET', '/v1/events?limit=1000&type=latest.moved&wait=1', { token: admin });
    const after = await server.request('GET', `/v1/events?after=${first.body.next}&wait=1`, { token: admin });
    expect(await fingerprint()).toEqual(before);
    expect(again.body).toEqual(first.body);
    expect(filtered.body.events).toEqual([first.body.events[1]]);
    expect(after.body).toEqual({ events: [], next: first.body.next });
  });
});

// A second connection needs a database server: the embedded database is one connection.
const servers = dbKinds().filter((kind) => kind !== 'pglite');

describe.each(servers)('the event feed through a read-only connection on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ kind });
  }, 180_000);
  afterAll(() => server?.close());

  it('answers through a connection that may only read: what committed before it asked is read once the outbox has numbered it', async () => {
    const settings = server.database.settings;
    const connection = { host: settings.host, port: settings.port, user: settings.user, password: settings.password, database: settings.database };
    const readOnly: Knex = kind === 'postgres'
      ? knexFactory({ client: 'pg', connection: { ...connection, options: '-c default_transaction_read_only=on' }, pool: { min: 0, max: 2 } })
      : knexFactory({
        client: 'mysql2',
        connection,
        pool: {
          min: 0,
          max: 2,
          afterCreate(conn: { query(sql: string, done: (error: Error | null) => void): void }, done: (error: Error | null, conn: unknown) => void) {
            conn.query('set session transaction read only', (error) => done(error, conn));
          },
        },
      });
    try {
      const cursor = (await feed({ db: server.db }, { limit: 1000, wait: 0 })).next;
      // The outbox may not number the new event until this transaction ends: the feed waits for it.
      const hold = await server.db.transaction();
      let page;
      try {
        await hold('event_sequence').select('last_seq').where({ name: 'events' }).forUpdate();
        await appendEvent(server.db, 'retention.finished', { mark: 'read-only' });
        // The feed's first answer from the database, before the numbering can happen: it has looked and found the event unnumbered.
        const looked = new Promise((resolve) => readOnly.once('query-response', resolve));
        const reading = feed({ db: readOnly }, { after: cursor, limit: 1000, wait: 0 });
        await looked;
        await hold.commit();
        page = await reading;
      } finally {
        if (!hold.isCompleted()) await hold.rollback();
      }
      expect(page.events.map((e) => e.data.mark)).toEqual(['read-only']);
    } finally {
      await readOnly.destroy();
    }
  });
});
