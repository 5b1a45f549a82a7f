// The command line's one HTTP module. Its core serves both clients, the registry's
// (cli/api/client.ts) and Jenkins' (cli/jenkins/client.ts): ky over the lean fetch (node-fetch.ts),
// one timeout, retries of idempotent calls on connection errors and on 429/502/503/504 (waiting out
// a short Retry-After), never a retry of a TLS failure, and what a failure to get an answer means,
// in words and as an AppError (exit 5). Below it, the registry's requests: JSON bodies, bearer
// tokens, and the server's error body read back into the same AppError.
import ky, { HTTPError, TimeoutError, type KyInstance, type Options } from 'ky';
import { AppError, codeForStatus, isErrorReason, isWireErrorCode, type FieldError, type WireErrorCode } from '../common/errors.js';
import { nodeFetch } from './node-fetch.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
/** A 429 or 503 asking us to wait longer than this fails at once instead. */
const MAX_RETRY_AFTER_MS = 10_000;
/** Statuses a proxy in front of a server answers itself when the server is away. */
export const GATEWAY_STATUSES = new Set([502, 503, 504]);

export interface CoreOptions {
  /** The server, e.g. `http://localhost:9090`. */
  baseUrl: string;
  timeoutMs?: number;
  /** Headers of every request (Jenkins' basic authentication). */
  headers?: Record<string, string>;
  /** `manual`: a redirect is answered to the caller (Jenkins: a POST must not become a GET). */
  redirect?: 'follow' | 'manual';
  /** `--verbose` lines (credentials masked, bodies never logged). */
  log?: (line: string) => void;
}

export interface RetryOptions {
  /** Attempts after the first one. */
  retries?: number;
  /** First backoff delay; doubled on each retry. */
  retryDelayMs?: number;
}

/** Who is at the other end, for messages: `Jenkins at https://ci.example.com` and what to check. */
export interface Peer {
  name: string;
  /** What to check when the address is wrong, e.g. `Check --url or REPOADMIN_URL`. */
  addressHint: string;
  /** What to check when the connection is refused. */
  refusedHint: string;
  /** What to do when no answer came in time. */
  timeoutHint: string;
}

/** `eyJhbGciOi…(312 chars)`: enough to tell tokens apart, not enough to use one. */
export function maskToken(token: string): string {
  return `${token.slice(0, 6)}…(${token.length} chars)`;
}

/** A ky instance that throws HTTPError for any status outside 2xx (a manual redirect included). */
export function createClient(options: CoreOptions): KyInstance {
  const log = options.log;
  return ky.create({
    prefixUrl: options.baseUrl,
    // Node's own fetch would cost each run more than the rest of it (node-fetch.ts).
    fetch: nodeFetch,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    throwHttpErrors: true,
    redirect: options.redirect ?? 'follow',
    headers: options.headers,
    retry: 0,
    hooks: {
      beforeRequest: [
        (request) => {
          if (!log) return;
          const auth = request.headers.get('authorization');
          const shown = !auth ? '' : /^Bearer /i.test(auth) ? ` (Authorization: Bearer ${maskToken(auth.replace(/^Bearer /i, ''))})` : ' (Authorization: masked)';
          log(`> ${request.method} ${request.url}${shown}`);
        },
      ],
      beforeRetry: [
        ({ request, error, retryCount }) => {
          log?.(`retrying ${request.method} ${request.url} (attempt ${retryCount + 1}) after: ${describe(error)}`);
        },
      ],
    },
  });
}

/** ky's retry option: idempotent calls are tried again, others never. */
export function retryFor(idempotent: boolean, options: RetryOptions = {}): Options['retry'] {
  if (!idempotent) return 0;
  const baseDelay = options.retryDelayMs ?? 300;
  return {
    limit: options.retries ?? 2,
    methods: ['get', 'post', 'put', 'delete'],
    statusCodes: [429, 502, 503, 504],
    afterStatusCodes: [429, 503],
    maxRetryAfter: MAX_RETRY_AFTER_MS,
    delay: (attempt) => baseDelay * 2 ** (attempt - 1),
    shouldRetry: ({ error }) => (tooLongToWait(error) || tlsProblem(networkCode(error), '') !== undefined ? false : undefined),
  };
}

function tooLongToWait(error: Error): boolean {
  if (!(error instanceof HTTPError)) return false;
  const seconds = retryAfterSeconds(error.response);
  return seconds !== undefined && seconds * 1000 > MAX_RETRY_AFTER_MS;
}

/** A Retry-After in seconds, given as seconds or as an HTTP date (RFC 9110, 10.2.3); undefined without one. */
export function retryAfterSeconds(response: Response): number | undefined {
  const header = response.headers.get('retry-after')?.trim();
  if (!header) return undefined;
  if (/^\d+$/.test(header)) return Number(header);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function describe(error: unknown): string {
  if (error instanceof HTTPError) return `${error.response.status} ${error.response.statusText}`.trim();
  const code = networkCode(error);
  return code ?? (error instanceof Error ? error.message : String(error));
}

function networkCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown; errors?: { code?: unknown }[] } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  // Node reports a refused connection to both IPv4 and IPv6 localhost as an AggregateError.
  const inner = cause?.errors?.find((e) => typeof e.code === 'string');
  return typeof inner?.code === 'string' ? inner.code : undefined;
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
};

/** What a TLS failure means and what to do, or undefined for other codes. A retry changes none of them. */
function tlsProblem(code: string | undefined, addressHint: string): string | undefined {
  if (code === undefined) return undefined;
  if (code === 'EPROTO' || code === 'ERR_SSL_WRONG_VERSION_NUMBER') return 'no TLS on the other side: does the server speak http rather than https?';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the server's certificate is for another host name: ${addressHint.charAt(0).toLowerCase()}${addressHint.slice(1)}`;
  if (code === 'CERT_HAS_EXPIRED') return "the server's certificate has expired";
  if (/^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?)$/.test(code)) {
    return "the server's certificate is not signed by an authority this machine trusts: add yours with NODE_EXTRA_CA_CERTS=/path/to/ca.pem";
  }
  return undefined;
}

/** A call that got no answer (timeout, connection, TLS) as the AppError main() turns into exit 5. */
export function networkFailure(error: unknown, peer: Peer, timeoutMs: number): AppError {
  if (error instanceof TimeoutError) return new AppError('unreachable', `no answer from ${peer.name} within ${timeoutMs / 1000} s. ${peer.timeoutHint}`);
  const code = networkCode(error);
  if (code === 'ECONNREFUSED') return new AppError('unreachable', `cannot reach ${peer.name} (connection refused). ${peer.refusedHint}`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new AppError('unreachable', `cannot reach ${peer.name} (${NETWORK_REASONS[code]}). ${peer.addressHint}`);
  const tls = tlsProblem(code, peer.addressHint);
  if (tls) return new AppError('unreachable', `cannot reach ${peer.name} (${code}): ${tls}`, { cause: error });
  if (code) return new AppError('unreachable', `cannot reach ${peer.name} (${NETWORK_REASONS[code] ?? code})`, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new AppError('unreachable', `cannot reach ${peer.name} (${message})`, { cause: error });
}

// The registry's requests.

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
