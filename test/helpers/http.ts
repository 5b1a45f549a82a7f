// The test servers' HTTP client.
//
// Node's fetch would do, but on a starved machine (CI runs four test files on two cores) a client
// can write its next request on a kept-alive connection in the same turn as the server's 5 s idle
// timer closes it: the request is reset unread ("read ECONNRESET" or "other side closed"). The
// race is HTTP/1.1's own: RFC 9112, 9.3.1, lets a client send again a request it knows was never
// applied. node:http says whether the socket was reused, so that reset is the one retried, on a
// new connection (the pattern of Node's documentation for request.reusedSocket). A reset of a new
// connection, or a second reset, is still a failure.
import http from 'node:http';

/** One request; sent once more, on a new connection, only if a reused one was reset before any answer. */
export function sendRequest(agent: http.Agent | false, options: http.RequestOptions, body: Buffer | undefined): Promise<{ status: number; rawHeaders: string[]; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ ...options, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) sendRequest(false, options, body).then(resolve, reject);
      else reject(error);
    });
    req.end(body);
  });
}
