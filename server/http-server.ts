// The HTTP server around the app, with the connection limits of api.md ("Faults").
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { UNMATCHED_ROUTE, countRequest, logRequest, requestIdFrom } from './http/observe.js';
import { SECURITY_HEADERS } from './http/pipeline.js';
import type { Metrics } from './metrics.js';

export const HTTP_LIMITS = {
  /** A connection that has not sent a complete request head by then gets 408 and is closed. */
  headersTimeout: 10_000,
  /** The whole request, body included, must have arrived by then. */
  requestTimeout: 60_000,
  /** An idle keep-alive connection is closed after this (Node adds up to a second). */
  keepAliveTimeout: 5_000,
  /**
   * How often Node looks for connections past the two limits above. Its default, 30 s, let a
   * connection that sends nothing stay open for up to 40 s: enough for one client to use up the
   * server's file descriptors.
   */
  connectionsCheckingInterval: 1_000,
} as const;

/** Where the answers the server gives without the app (to broken requests) are logged and counted. */
export interface Observer {
  log: Logger;
  metrics?: Metrics;
}

export function createHttpServer(listener: http.RequestListener, observer: Observer): http.Server {
  const server = http.createServer(
    { headersTimeout: HTTP_LIMITS.headersTimeout, requestTimeout: HTTP_LIMITS.requestTimeout, connectionsCheckingInterval: HTTP_LIMITS.connectionsCheckingInterval },
    listener,
  );
  server.keepAliveTimeout = HTTP_LIMITS.keepAliveTimeout;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerBrokenRequest(error, socket, observer));
  return server;
}

/** How long a refused connection may go on sending what is left of its request before it is closed. */
const DRAIN_MS = 5_000;

const BROKEN_REQUEST_STATUS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * The method label and log field of a request Node's parser refused: its head was not read, and
 * what the refused bytes seem to say is not taken for it.
 */
export const UNKNOWN_METHOD = 'unknown';

/**
 * Answers a request Node's parser refused (a head over 16 KB, a broken head, a timeout) as Node
 * would, with two differences. Like every answer, it carries a new X-Request-Id (the client's own
 * was in the head that was not read) and the security headers, and is logged and counted. And
 * Node closes the connection with the rest of the request unread, and a socket closed with unread
 * data is reset, so the client often gets the reset instead of the answer (always on Node 24 for a
 * 70 KB head). Here the answer is sent and the connection half-closed; what the client still sends
 * is read and dropped until it closes its side (at most DRAIN_MS).
 */
function answerBrokenRequest(error: NodeJS.ErrnoException, socket: Duplex, observer: Observer): void {
  const started = process.hrtime.bigint();
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || answering?.headersSent || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const status = BROKEN_REQUEST_STATUS[error.code ?? ''] ?? 400;
  const requestId = requestIdFrom(undefined);
  const headers = [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`,
    'Connection: close',
    'Content-Length: 0',
    `X-Request-Id: ${requestId}`,
    ...Object.entries(SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${headers.join('\r\n')}\r\n\r\n`);
  if (observer.metrics) countRequest(observer.metrics, UNKNOWN_METHOD, UNMATCHED_ROUTE, status, started);
  logRequest(observer.log, requestId, UNKNOWN_METHOD, '', status, started);
  const timer = setTimeout(() => socket.destroy(), DRAIN_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.resume();
}
