import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendRequest } from './http.js';

describe("the test servers' HTTP client", () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  async function listen(handler: http.RequestListener): Promise<http.RequestOptions> {
    server = http.createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { host: '127.0.0.1', port: (server.address() as AddressInfo).port, method: 'POST', path: '/' };
  }

  it('sends a request again on a new connection when the server closed the kept-alive one as the request was written', async () => {
    const seen: string[] = [];
    const options = await listen((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk));
      req.on('end', () => {
        seen.push(body);
        res.end(`got ${body}`);
      });
    });
    const agent = new http.Agent({ keepAlive: true });
    try {
      expect((await sendRequest(agent, options, Buffer.from('first'))).text).toBe('got first');
      // What the server's idle timer does, in the same turn as the next request is written: the
      // client has not yet read the close, writes on the old connection and is reset.
      server?.closeIdleConnections();
      const second = await sendRequest(agent, options, Buffer.from('second'));
      expect(second).toMatchObject({ status: 200, text: 'got second' });
      expect(seen).toEqual(['first', 'second']);
    } finally {
      agent.destroy();
    }
  });

  it('does not send again when a new connection is reset', async () => {
    let requests = 0;
    const options = await listen((req) => {
      requests++;
      req.socket.resetAndDestroy();
    });
    const agent = new http.Agent({ keepAlive: true });
    try {
      await expect(sendRequest(agent, options, Buffer.from('x'))).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(requests).toBe(1);
    } finally {
      agent.destroy();
    }
  });
});
