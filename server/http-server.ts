// The HTTP server around the app, with the connection limits of api.md ("Faults").
import http from 'node:http';

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
  return server;
}
