// The rows of one cached statement, sent to `pg` as a submittable (pg's public interface for a
// statement that handles its own messages: `client.query(submittable)`, as pg-cursor is; pg 8.23
// lib/client.js `query`, lib/query.js). It speaks the extended protocol exactly as pg's own Query
// does for a named statement (parse once per connection, bind, execute, sync), with two savings
// that bench/results/2026-11-29-statement-rows.md measured:
// - The answer's field names and text parsers are kept per connection and statement name, so a
//   statement the connection has described once is not described again. pg's Query asks for the
//   row description every time and rebuilds its parsers and an empty row object from it (lib/result.js,
//   `addFields`), and copies each query's config through its property descriptors (lib/utils.js,
//   `cloneQueryConfig`): 12 µs of a latest lookup's 150 in a profile. With this path the lookup's
//   CPU went from 129 to 102 µs an answer.
// - Each row is made as an ordinary object in the fields' order, so that all the rows of a
//   statement share one shape.
// A prepared statement's result columns cannot change while it exists on its connection (PostgreSQL
// refuses to run it: "cached plan must not change result type"); any error forgets the description.

/** What PostgreSQL says of one column of the answer (pg-protocol's RowDescription field). */
interface FieldDescription {
  name: string;
  dataTypeID: number;
  format: string;
}

/** How one column of a row is read: its name, and its parser of PostgreSQL's text form. */
export interface Fields {
  names: string[];
  parsers: ((text: string) => unknown)[];
}

/**
 * The parts of pg's protocol connection (lib/connection.js) a statement writes to. Which statements
 * the connection has parsed is pg's own record, which its client keeps (`_handleParseComplete`) and
 * its Query reads: knex's statements in a transaction run the same names through pg's Query.
 */
export interface PgConnection {
  stream: { cork?(): void; uncork?(): void };
  parsedStatements: Record<string, string | undefined>;
  submittedNamedStatements: Record<string, string | undefined>;
  parse(config: { text: string; name?: string }): void;
  bind(config: { portal: string; statement?: string; values: unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: { portal: string }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

export type TypeParser = (oid: number, format: 'text') => (text: string) => unknown;

/** The answer: an error, or the rows. */
export type RowsAnswer = (error: Error | null, rows?: Record<string, unknown>[]) => void;

export class StatementRows {
  /** Read by pg's client: a named statement is recorded as parsed on its connection once PostgreSQL has. */
  readonly name: string | undefined;
  readonly text: string;
  readonly #values: unknown[];
  /** The descriptions of the statements of this statement's connection, by name. */
  readonly #described: Map<string, Fields>;
  readonly #typeParser: TypeParser;
  readonly #prepareValue: (value: unknown) => unknown;
  #answer: RowsAnswer | undefined;
  #fields: Fields | undefined;
  readonly #rows: Record<string, unknown>[] = [];
  /** A failure before PostgreSQL's answer ended (a value that cannot be sent, a row that cannot be read). */
  #failed: Error | undefined;

  constructor(
    statement: { name?: string; text: string; values: unknown[] },
    described: Map<string, Fields>,
    typeParser: TypeParser,
    prepareValue: (value: unknown) => unknown,
    answer: RowsAnswer,
  ) {
    this.name = statement.name;
    this.text = statement.text;
    this.#values = statement.values;
    this.#described = described;
    this.#typeParser = typeParser;
    this.#prepareValue = prepareValue;
    this.#answer = answer;
    this.#fields = statement.name === undefined ? undefined : described.get(statement.name);
  }

  /** Called by pg's client when the connection is free: writes the statement's messages in one go. */
  submit(connection: PgConnection): null {
    const name = this.name;
    connection.stream.cork?.();
    try {
      if (name === undefined || (connection.parsedStatements[name] === undefined && connection.submittedNamedStatements[name] === undefined)) {
        connection.parse({ text: this.text, name });
        if (name !== undefined) connection.submittedNamedStatements[name] = this.text;
      }
      try {
        connection.bind({ portal: '', statement: name, values: this.#values, valueMapper: this.#prepareValue });
      } catch (error) {
        // The answer is the error, once PostgreSQL is ready again. The statement is left prepared:
        // pg's Query closes it here, after its parse has been recorded as done, and the next run of
        // the name then fails with "prepared statement does not exist" (pg-rows.test.ts).
        this.#failed = error as Error;
        connection.sync();
        return null;
      }
      if (!this.#fields) connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '' });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    const fields: Fields = { names: [], parsers: [] };
    for (const field of message.fields) {
      fields.names.push(field.name);
      fields.parsers.push(this.#typeParser(field.dataTypeID, 'text'));
    }
    this.#fields = fields;
    if (this.name !== undefined) this.#described.set(this.name, fields);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.#failed) return;
    const fields = this.#fields;
    if (!fields) {
      this.#failed = new Error('a row came before its description');
      return;
    }
    try {
      const row: Record<string, unknown> = {};
      const values = message.fields;
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        row[fields.names[i]!] = value === null || value === undefined ? null : fields.parsers[i]!(value);
      }
      this.#rows.push(row);
    } catch (error) {
      this.#failed = error as Error;
    }
  }

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: PgConnection): void {
    connection.sendCopyFail('No source stream defined');
  }

  handleCopyData(): void {}

  /** PostgreSQL's error, or the connection's: the statement's description is forgotten with it. */
  handleError(error: Error): void {
    if (this.name !== undefined) this.#described.delete(this.name);
    this.#finish(this.#failed ?? error);
  }

  handleReadyForQuery(): void {
    if (this.#failed) this.handleError(this.#failed);
    else this.#finish(null, this.#rows);
  }

  #finish(error: Error | null, rows?: Record<string, unknown>[]): void {
    const answer = this.#answer;
    this.#answer = undefined;
    answer?.(error, rows);
  }
}
