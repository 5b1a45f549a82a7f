// The registry's HTTP calls over the shared core (cli/http.ts): JSON bodies, bearer tokens, and
// the server's error body back into AppError.
import { HTTPError } from 'ky';
import { AppError, codeForStatus, isErrorReason, isWireErrorCode, type FieldError, type WireErrorCode } from '../../common/errors.js';
import { createClient, DEFAULT_TIMEOUT_MS, GATEWAY_STATUSES, networkFailure, retryAfterSeconds, retryFor, type Peer } from '../http.js';

export { DEFAULT_TIMEOUT_MS, maskToken, retryAfterSeconds } from '../http.js';

export interface HttpOptions {
  /** The server, e.g. `http://localhost:9090`. */
  baseUrl: string;
  timeoutMs?: number;
  /** Attempts after the first one, for idempotent calls. */
  retries?: number;
  /** First backoff delay; doubled on each retry. */
  retryDelayMs?: number;
  /** `--verbose` lines (tokens masked, bodies never logged). */
  log?: (line: string) => void;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Below the base address, e.g. `v1/users`. */
  path: string;
  json?: unknown;
  searchParams?: Record<string, string | number | undefined>;
  token?: string;
  /** Safe to send again: retried on connection errors and 502/503/504. */
  idempotent?: boolean;
  /**
   * The route exists on every repoadmin server and names no record, so a 404 cannot mean "not
   * found": the address is not a repoadmin server's (or has a wrong path). Exit 5, never 3.
   */
  notFoundMeansWrongServer?: boolean;
  /** A POST that only reads (the search): sends the last write's position like a GET. */
  reads?: boolean;
  /** Headers sent besides the token (a read's X-Repoadmin-Position). */
  headers?: Record<string, string>;
  /** Given the headers of a successful answer (a write's X-Repoadmin-Position). */
  onHeaders?: (headers: Headers) => void | Promise<void>;
  /** Given the status of a successful answer (a promotion: 201 made, 200 already current). */
  onStatus?: (status: number) => void;
}

/** A write's position in the server's database, sent back by the reads that follow (docs/api.md). */
export const POSITION_HEADER = 'X-Repoadmin-Position';

export type Http = <T>(request: HttpRequest) => Promise<T>;

export function createHttp(options: HttpOptions): Http {
  const log = options.log;
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = createClient({ baseUrl: options.baseUrl, timeoutMs: timeout, log });

  return async <T>(request: HttpRequest): Promise<T> => {
    const retry = retryFor(request.idempotent ?? false, { retries: options.retries, retryDelayMs: options.retryDelayMs });
    const searchParams = Object.fromEntries(
      Object.entries(request.searchParams ?? {}).filter((entry): entry is [string, string | number] => entry[1] !== undefined),
    );
    const started = performance.now();
    const took = () => `${(performance.now() - started).toFixed(0)} ms`;
    try {
      const response = await client(request.path, {
        method: request.method,
        json: request.json,
        searchParams,
        retry,
        headers: { ...request.headers, ...(request.token ? { authorization: `Bearer ${request.token}` } : {}) },
      });
      log?.(`< ${response.status} ${request.method} ${request.path} in ${took()}${requestId(response)}`);
      await request.onHeaders?.(response.headers);
      request.onStatus?.(response.status);
      if (response.status === 204) return undefined as T;
      return (await readJson(response, options.baseUrl)) as T;
    } catch (error) {
      if (error instanceof HTTPError) log?.(`< ${error.response.status} ${request.method} ${request.path} in ${took()}${requestId(error.response)}`);
      const failure = await toAppError(error, options.baseUrl, timeout);
      if (failure.code === 'not_found' && request.notFoundMeansWrongServer) throw wrongServer(`404 (${failure.message})`, options.baseUrl);
      throw failure;
    }
  };
}

/** A success that is not JSON comes from something else at that address (a web server, a proxy page). */
async function readJson(response: Response, baseUrl: string): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    const type = response.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
    throw new AppError('unreachable', `${baseUrl} did not answer with JSON (${type}): is it a repoadmin server? Check --url or REPOADMIN_URL`);
  }
}

function requestId(response: Response): string {
  const id = response.headers.get('x-request-id');
  return id ? ` (request id ${id})` : '';
}

function wrongServer(answer: string, baseUrl: string): AppError {
  return new AppError('unreachable', `${baseUrl} answered ${answer}: is this a repoadmin server? Check --url or REPOADMIN_URL (the server's address, e.g. http://localhost:9090)`);
}

/** How failures to reach the registry read. */
function registry(baseUrl: string): Peer {
  return {
    name: baseUrl,
    addressHint: 'Check --url or REPOADMIN_URL',
    refusedHint: 'Is the server running? Start one with: repoadmin server',
    timeoutHint: 'Is the server overloaded? Set REPOADMIN_TIMEOUT (seconds) to wait longer',
  };
}

/** Any failure of a call as the AppError that main() turns into an exit code. */
export async function toAppError(error: unknown, baseUrl: string, timeoutMs: number): Promise<AppError> {
  if (error instanceof AppError) return error;
  if (error instanceof HTTPError) return fromResponse(error.response);
  return networkFailure(error, registry(baseUrl), timeoutMs);
}

/** The server's error body (docs/api.md, "Errors") as an AppError; a body we cannot read falls back on the status. */
export async function fromResponse(response: Response): Promise<AppError> {
  const body: unknown = await response.json().catch(() => undefined);
  const message = (body as { _message?: { code?: unknown; message?: unknown } } | undefined)?._message;
  const retryAfter = retryAfterSeconds(response) || undefined;
  if (message && isWireErrorCode(message.code) && typeof message.message === 'string') {
    const { errors, reason } = body as { errors?: FieldError[]; reason?: unknown };
    const code: WireErrorCode = message.code;
    const text = code === 'rate_limited' && retryAfter ? `${message.message} (try again in ${retryAfter} s)` : message.message;
    return new AppError(code, text, { errors, retryAfter, reason: isErrorReason(reason) ? reason : undefined });
  }
  const status = `${response.status} ${response.statusText}`.trim();
  // Our server answers every 404 with its error body, and every error with JSON: this one is not the
  // registry (a web server, a sign-in page of a proxy), and a script must not take it for
  // `search --latest` finding nothing (exit 3) or for a bad token (exit 4). A gateway's 502, 503
  // or 504 page is the registry behind it being away, and says so below.
  if (response.status === 404 || (body === undefined && !GATEWAY_STATUSES.has(response.status))) {
    return wrongServer(`${status} for ${response.url}`, new URL(response.url).origin);
  }
  return new AppError(codeForStatus(response.status), `the server answered ${status} (${response.url})`, { retryAfter });
}
