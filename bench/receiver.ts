// The webhook receiver of the benchmark (bench/webhooks.ts): answers every POST with 200 at once and
// notes each delivery's webhook-id and when its request arrived, in its own process so that it
// shares no event loop with the load generator. GET /received hands over what it noted.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** [webhook-id, arrival in Unix milliseconds (fractional)] in arrival order. */
const arrivals: [string, number][] = [];

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/received') {
    const text = JSON.stringify(arrivals);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  // The wall clock, to set beside the event's commit time that PostgreSQL took on the same machine.
  const at = performance.timeOrigin + performance.now();
  arrivals.push([String(req.headers['webhook-id'] ?? ''), at]);
  req.resume();
  req.once('end', () => {
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`receiver listening on http://localhost:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
});
