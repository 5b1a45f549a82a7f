// The two reads pipelines make most, the latest lookup and the search, answered straight from
// node:http without Koa's per-request context and middleware chain, which cost the server about as
// much CPU as the request's own work (bench/results, 2026-11-23 profiles). Only ordinary requests
// come here: no Authorization header on a server whose search is public, a query string that
// validates, a JSON body or none. Everything else goes to Koa, which answers as always. The answer,
// its headers, the metrics and the access log line are the same either way (test/server/fast-reads.test.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LatestQuery, SearchQuery, SearchRequest, paging, searchFilters } from '../common/schemas/repositories.js';
import type { Outages } from './db/outage.js';
import type { Metrics } from './metrics.js';
import { logRequest } from './middleware/access-log.js';
import { hasBody, jsonObject, readBodyText } from './middleware/body.js';
import { failureAnswer } from './middleware/errors.js';
import { countRequest } from './middleware/metrics.js';
import { requestIdFrom } from './middleware/request-id.js';
import { parse } from './middleware/validate.js';
import type { Services } from './services/context.js';
import { latest, search } from './services/versions.js';

const LATEST = '/v1/repositories/latest';
const SEARCH = '/v1/repositories/search';

export type FastReads = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The query string as Koa reads it; undefined when a name is repeated (Koa's route answers that). */
function queryOf(search: string): Record<string, string> | undefined {
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(search)) {
    if (Object.hasOwn(query, name)) return undefined;
    query[name] = value;
  }
  return query;
}

export function isJson(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  return type !== undefined && type.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

/** Answers the request and returns true, or returns false having touched nothing. */
export function fastReads(s: Services, metrics: Metrics | undefined, outages: Outages): FastReads {
  return (req, res) => {
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const method = req.method;
    const isLatest = method === 'GET' && path === LATEST;
    if (!isLatest && !(method === 'POST' && path === SEARCH)) return false;
    if (req.headers.authorization !== undefined || !s.config.searchPublic) return false;
    const query = queryOf(mark < 0 ? '' : url.slice(mark + 1));
    if (!query) return false;
    let work: () => Promise<unknown>;
    if (isLatest) {
      const key = LatestQuery.safeParse(query);
      if (!key.success) return false;
      work = () => latest(s, key.data);
    } else {
      const pages = SearchQuery.safeParse(query);
      if (!pages.success) return false;
      const withBody = hasBody(req);
      if (withBody && !isJson(req)) return false;
      work = async () => {
        const request = parse(SearchRequest, withBody ? jsonObject(await readBodyText(req), { optional: true }) : {});
        return search(s, searchFilters(request), paging(pages.data));
      };
    }
    answer(s, metrics, outages, req, res, path, work).catch((error: unknown) => lastResort(s, res, error));
    return true;
  };
}

async function answer(
  s: Services,
  metrics: Metrics | undefined,
  outages: Outages,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  work: () => Promise<unknown>,
): Promise<void> {
  const started = process.hrtime.bigint();
  const id = requestIdOf(req);
  try {
    respond(s, metrics, req, res, path, started, id, 200, await work());
  } catch (caught) {
    const failure = failureAnswer(caught, id, s.log, outages);
    // A failure after the answer went out (counting or logging it) is logged, never answered twice.
    if (!res.headersSent) respond(s, metrics, req, res, path, started, id, failure.status, failure.body, failure.retryAfter);
  }
}

/**
 * What failed while answering a failure (counting or logging it): logged, and the connection ended
 * if no answer went out, rather than an unhandled rejection ending the server.
 */
export function lastResort(s: Services, res: ServerResponse, error: unknown): void {
  s.log.error({ err: error }, 'request failed');
  if (!res.headersSent) res.destroy();
}

/** The request's id, as the request-id middleware takes or makes it. */
export function requestIdOf(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  return requestIdFrom(typeof header === 'string' ? header : undefined);
}

/** Writes a JSON answer as Koa would, then counts and logs the request under its route. */
export function respond(
  s: Services,
  metrics: Metrics | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  started: bigint,
  id: string,
  status: number,
  body: unknown,
  retryAfter?: number,
): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'X-Request-Id': id,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  };
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  res.writeHead(status, headers);
  res.end(text);
  const method = req.method!;
  if (metrics) countRequest(metrics, method, path, status, started);
  logRequest(s.log, id, method, path, status, started);
}
