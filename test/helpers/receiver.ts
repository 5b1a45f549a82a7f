// A webhook receiver on 127.0.0.1 for tests: records every request (headers, body, when it came and
// went) and answers as the test says, so tests can count attempts and overlaps per webhook-id.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: http.IncomingHttpHeaders;
  startedAt: number;
  endedAt?: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The most requests with the same webhook-id that were in flight at the same moment. */
  maxOverlapPerId(): number;
  close(): Promise<void>;
}

/** `answer`: the status (and headers) for a request, given the requests with its webhook-id so far. */
export async function startReceiver(
  answer: (request: Received, sameId: number) => { status: number; headers?: Record<string, string>; delayMs?: number } = () => ({ status: 204 }),
): Promise<Receiver> {
  const received: Received[] = [];
  let maxOverlap = 0;
  const inFlight = new Map<string, number>();
  /** Requests so far per webhook-id (counted, not searched for: a test may send thousands). */
  const seen = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = {
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers,
        startedAt: Date.now(),
      };
      received.push(entry);
      const now = (inFlight.get(entry.id) ?? 0) + 1;
      inFlight.set(entry.id, now);
      maxOverlap = Math.max(maxOverlap, now);
      const sameId = (seen.get(entry.id) ?? 0) + 1;
      seen.set(entry.id, sameId);
      const { status, headers, delayMs } = answer(entry, sameId);
      setTimeout(() => {
        inFlight.set(entry.id, inFlight.get(entry.id)! - 1);
        entry.endedAt = Date.now();
        res.writeHead(status, headers).end();
      }, delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    maxOverlapPerId: () => maxOverlap,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits until `done` holds, looking every 50 ms, failing after `ms`. */
export async function eventually(done: () => boolean | Promise<boolean>, ms = 20_000, what = 'the condition'): Promise<void> {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
