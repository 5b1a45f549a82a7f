// The cached statements' own path through `pg` (pg-rows.ts), on a real PostgreSQL server, on one
// connection of the server's client class (pg-driver.ts, boundPg): its rows are the rows pg's own
// query reads, a named statement is described once per connection, and a failure (PostgreSQL's, or
// a value pg cannot send) answers that statement only and forgets its description.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, pgAvailable } from '../../../test/helpers/db.js';
import { connectionMarks } from '../driver.js';
import { boundPg, type PgStatement } from './pg-driver.js';

interface RowsClient {
  connect(): Promise<void>;
  end(): Promise<void>;
  query(text: string | { text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
  rows(statement: PgStatement, answer: (error: Error | null, rows?: Record<string, unknown>[]) => void): void;
  connection: { describe: (...args: unknown[]) => void };
}

const rowsOf = (client: RowsClient, statement: PgStatement) =>
  new Promise<Record<string, unknown>[]>((resolve, reject) => client.rows(statement, (error, rows) => (error ? reject(error) : resolve(rows!))));

describe.runIf(pgAvailable())('the cached statements\' path through pg', () => {
  let database: TestDatabase;
  let client: RowsClient;
  /** How many times the client has asked PostgreSQL to describe an answer. */
  let describes = 0;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const { host, port, user, database: name } = database.settings;
    const Bound = (boundPg(pg, 5_000, () => false, connectionMarks()) as typeof pg).Client;
    client = new Bound({ host, port, user, database: name }) as unknown as RowsClient;
    await client.connect();
    const describe = client.connection.describe.bind(client.connection);
    client.connection.describe = (...args) => {
      describes++;
      describe(...args);
    };
    await client.query(`create table kinds (
      n integer, big bigint, t text, yes boolean, at timestamptz(3), doc jsonb, amount numeric, tags text[], day date)`);
    await client.query(`insert into kinds values
      (1, 9007199254740993, 'one', true, '2026-11-29 10:00:00.123+00', '{"a":[1,2]}', 12.50, '{x,y}', '2026-11-29'),
      (2, null, null, false, null, 'null', null, '{}', null)`);
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  it('reads the rows pg\'s own query reads, named or not, with the same values', async () => {
    const text = 'select * from kinds where n >= $1 order by n';
    const expected = (await client.query({ text, values: [0] })).rows;
    expect(expected).toHaveLength(2);
    expect(await rowsOf(client, { name: 'pg-rows-test:kinds', text, values: [0] })).toEqual(expected);
    // Described now: the second run reads the same rows without a description.
    expect(await rowsOf(client, { name: 'pg-rows-test:kinds', text, values: [0] })).toEqual(expected);
    expect(await rowsOf(client, { text, values: [0] })).toEqual(expected);
    // Values pg converts before sending (lib/utils.js, prepareValue): a date, an array, an object.
    const sent = await rowsOf(client, {
      name: 'pg-rows-test:values',
      text: 'select $1::timestamptz as at, $2::text[] as tags, $3::jsonb as doc, $4::int as none',
      values: [new Date('2026-11-29T10:00:00.123Z'), ['a', 'b'], { k: 'v' }, null],
    });
    expect(sent).toEqual([{ at: new Date('2026-11-29T10:00:00.123Z'), tags: ['a', 'b'], doc: { k: 'v' }, none: null }]);
  });

  it('describes a named statement once on a connection, and reads every later answer by that description', async () => {
    const statement = (n: number): PgStatement => ({ name: 'pg-rows-test:once', text: 'select n, t from kinds where n = $1', values: [n] });
    const before = describes;
    expect(await rowsOf(client, statement(1))).toEqual([{ n: 1, t: 'one' }]);
    expect(await rowsOf(client, statement(2))).toEqual([{ n: 2, t: null }]);
    expect(await rowsOf(client, statement(3))).toEqual([]);
    expect(describes - before).toBe(1);
    // A statement without a name is described each time, as it is parsed each time.
    await rowsOf(client, { text: 'select 1 as one', values: [] });
    await rowsOf(client, { text: 'select 1 as one', values: [] });
    expect(describes - before).toBe(3);
  });

  it('answers PostgreSQL\'s error to its statement only, forgets the description, and goes on', async () => {
    const divide = (by: number): PgStatement => ({ name: 'pg-rows-test:divide', text: 'select 6 / $1::int as q', values: [by] });
    const before = describes;
    expect(await rowsOf(client, divide(2))).toEqual([{ q: 3 }]);
    await expect(rowsOf(client, divide(0))).rejects.toMatchObject({ code: '22012' });
    expect(await rowsOf(client, divide(3))).toEqual([{ q: 2 }]);
    expect(describes - before).toBe(2);
  });

  it('fails a statement whose value pg cannot send, and the connection goes on', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(rowsOf(client, { name: 'pg-rows-test:json', text: 'select $1::jsonb as doc', values: [circular] })).rejects.toThrow(/circular/i);
    expect(await rowsOf(client, { name: 'pg-rows-test:json', text: 'select $1::jsonb as doc', values: [{ ok: true }] })).toEqual([{ doc: { ok: true } }]);
    expect((await client.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
  });
});
