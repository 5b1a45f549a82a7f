// The hardest limit for reads: a server written with nothing but `node:http` and a `pg` pool of
// the server's size, answering the benchmark's latest lookup and search with the same SQL as named
// prepared statements, in its own process like the real server. It reads the query string and body
// as any server must and shapes the rows into the same JSON answer, but validates nothing: the
// statements and their values come from scenarios.ts through MINIMAL_STATEMENTS.
// It also publishes (POST /v1/repositories) the way the benchmark's straight-through-pg limit does
// (scenarios.ts publishBodyThroughPg: the record's schema, then the server's one publish statement,
// which checks the caller the session token's claims name and writes the request's audit entry),
// verifying no signature: what HTTP alone adds to that limit. With MINIMAL_PUBLISH=record it
// publishes the record alone, with no check and no entry (the floor of the earlier runs).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { fromRow } from '../server/db/versions.js';
import { toVersionInformation as shape } from '../server/services/versions.js';
import { publishBodyThroughPg } from './scenarios.js';

const toVersionInformation = (row: Record<string, unknown>) => shape(fromRow(row));

interface Statement {
  sql: string;
  bindings: unknown[];
}

/** The statements of each read, by the query string of a latest lookup and the body of a search. */
const statements = JSON.parse(process.env.MINIMAL_STATEMENTS ?? '{}') as {
  latest?: Record<string, Statement>;
  search?: Record<string, { page: Statement; count: Statement; size: number; page_: number }>;
};
/** One prepared statement name per SQL text. */
const names = new Map<string, string>();
const nameOf = (sql: string) => names.get(sql) ?? (names.set(sql, `s${names.size + 1}`), names.get(sql)!);
const pool = new pg.Pool({ connectionString: process.env.MINIMAL_PG_URL, max: Number(process.env.MINIMAL_POOL ?? 10) });

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function latest(url: URL): Promise<unknown> {
  const s = statements.latest![url.search]!;
  // The values a real handler would take from the query string.
  void url.searchParams.get('groupId');
  const result = await pool.query({ name: nameOf(s.sql), text: s.sql, values: s.bindings });
  return toVersionInformation(result.rows[0]);
}

async function search(body: string): Promise<unknown> {
  const s = statements.search![body]!;
  if (body) JSON.parse(body);
  const [rows, count] = await Promise.all([
    pool.query({ name: nameOf(s.page.sql), text: s.page.sql, values: s.page.bindings }),
    pool.query({ name: nameOf(s.count.sql), text: s.count.sql, values: s.count.bindings }),
  ]);
  const total = Number(count.rows[0]?.n ?? 0);
  return {
    versionInformation: rows.rows.map(toVersionInformation),
    page: { totalElements: total, totalPages: Math.ceil(total / s.size), currentPage: s.page_, numberOfElements: rows.rows.length },
  };
}

/** The same answer as the server's: `{ _status, uid, created }`, 201 when the record is new. */
const recordAlone = process.env.MINIMAL_PUBLISH === 'record';

async function publish(req: http.IncomingMessage, body: string): Promise<{ created: boolean; body: unknown }> {
  const caller = recordAlone ? undefined : { jwt: (req.headers.authorization ?? '').slice('Bearer '.length), address: req.socket.remoteAddress ?? '' };
  const result = await publishBodyThroughPg(pool, JSON.parse(body), caller);
  const row = result.rows[0] as { uid: string; created: boolean };
  return { created: row.created, body: { _status: true, uid: row.uid, created: row.created } };
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'POST' && url.pathname === '/v1/repositories') {
      return void publish(req, Buffer.concat(chunks).toString('utf8')).then(
        ({ created, body }) => send(res, created ? 201 : 200, body),
        (error: Error) => send(res, 500, { _status: false, message: error.message }),
      );
    }
    const answer =
      req.method === 'GET' && url.pathname === '/v1/repositories/latest'
        ? latest(url)
        : req.method === 'POST' && url.pathname === '/v1/repositories/search'
          ? search(Buffer.concat(chunks).toString('utf8'))
          : undefined;
    if (!answer) return send(res, 404, { _status: false });
    answer.then(
      (body) => send(res, 200, body),
      (error: Error) => send(res, 500, { _status: false, message: error.message }),
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`minimal listening on http://localhost:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
  void pool.end();
});
