// The HTTP core of both clients, the registry's (cli/api/http.ts) and Jenkins' (cli/jenkins/client.ts):
// ky over the lean fetch, one timeout, retries of idempotent calls on connection errors and on
// 429/502/503/504 (waiting out a short Retry-After), never a retry of a TLS failure, and what a
// failure to get an answer means, in words and as an AppError (exit 5).
import ky, { HTTPError, TimeoutError, type KyInstance, type Options } from 'ky';
import { AppError } from '../common/errors.js';
import { nodeFetch } from './api/node-fetch.js';

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
