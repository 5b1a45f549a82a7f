// The HTTP server around the app, with the connection limits of api.md ("Faults").
import http from 'node:http';
import type { Duplex } from 'node:stream';

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

export function createHttpServer(listener: http.RequestListener): http.Server {
  const server = http.createServer(
    { headersTimeout: HTTP_LIMITS.headersTimeout, requestTimeout: HTTP_LIMITS.requestTimeout, connectionsCheckingInterval: HTTP_LIMITS.connectionsCheckingInterval },
    listener,
  );
  server.keepAliveTimeout = HTTP_LIMITS.keepAliveTimeout;
  server.on('clientError', answerBrokenRequest);
  return server;
}

/** How long a refused connection may go on sending what is left of its request before it is closed. */
const DRAIN_MS = 5_000;

const BROKEN_REQUEST_STATUS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/**
 * Answers a request Node's parser refused (a head over 16 KB, a broken head, a timeout) as Node
 * would, with one difference: Node closes the connection with the rest of the request unread, and
 * a socket closed with unread data is reset, so the client often gets the reset instead of the
 * answer (always on Node 24 for a 70 KB head). Here the answer is sent and the connection
 * half-closed; what the client still sends is read and dropped until it closes its side (at most
 * DRAIN_MS).
 */
function answerBrokenRequest(error: NodeJS.ErrnoException, socket: Duplex): void {
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || answering?.headersSent || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const status = BROKEN_REQUEST_STATUS[error.code ?? ''] ?? '400 Bad Request';
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  const timer = setTimeout(() => socket.destroy(), DRAIN_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.resume();
}
