// nodeFetch against a small real HTTP server: what ky and the client rely on from a fetch.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeFetch } from './node-fetch.js';

let server: http.Server;
let base: string;
let other: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      const echo = () => {
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'r1' });
        res.end(JSON.stringify({ method: req.method, path: url.pathname + url.search, body, auth: req.headers.authorization ?? null, type: req.headers['content-type'] ?? null }));
      };
      if (url.pathname === '/echo') return echo();
      if (url.pathname === '/temporary') return res.writeHead(307, { location: '/echo?moved=1' }).end();
      if (url.pathname === '/see-other') return res.writeHead(303, { location: `${other}/echo` }).end();
      if (url.pathname === '/empty') return res.writeHead(204).end();
      if (url.pathname === '/gzip') return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync('{"zipped":true}'));
      if (url.pathname === '/slow') return setTimeout(echo, 2000);
      if (url.pathname === '/hang-up') return req.socket.destroy();
      res.writeHead(503, 'Service Unavailable', { 'retry-after': '2' }).end('down');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  // The same server under another origin, for the cross-origin redirect.
  other = `http://localhost:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (path: string, init: RequestInit = {}) =>
  new Request(base + path, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json', authorization: 'Bearer t' }, ...init });

describe('nodeFetch', () => {
  it('sends the Request and answers a standard Response', async () => {
    const response = await nodeFetch(post('/echo?q=1'));
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('r1');
    expect(response.url).toBe(`${base}/echo?q=1`);
    expect(await response.json()).toEqual({ method: 'POST', path: '/echo?q=1', body: '{"a":1}', auth: 'Bearer t', type: 'application/json' });
  });

  it('keeps method and body on a 307, and drops body and Authorization on a 303 to another origin', async () => {
    const temporary = await nodeFetch(post('/temporary'));
    expect(temporary.redirected).toBe(true);
    expect(await temporary.json()).toMatchObject({ method: 'POST', path: '/echo?moved=1', body: '{"a":1}', auth: 'Bearer t' });
    const seeOther = await nodeFetch(post('/see-other'));
    expect(seeOther.url).toBe(`${other}/echo`);
    expect(await seeOther.json()).toEqual({ method: 'GET', path: '/echo', body: '', auth: null, type: null });
  });

  it('answers 204 without a body, decodes gzip, and keeps status text and headers of errors', async () => {
    const empty = await nodeFetch(new Request(`${base}/empty`, { method: 'DELETE' }));
    expect([empty.status, empty.body]).toEqual([204, null]);
    expect(await (await nodeFetch(`${base}/gzip`)).json()).toEqual({ zipped: true });
    const down = await nodeFetch(`${base}/nowhere`);
    expect([down.status, down.statusText, down.headers.get('retry-after'), await down.text()]).toEqual([503, 'Service Unavailable', '2', 'down']);
  });

  it('fails like fetch on a connection error, with the cause the client reads the reason from', async () => {
    await expect(nodeFetch(`${base}/hang-up`)).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNRESET' } });
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(nodeFetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    const answer = nodeFetch(new Request(`${base}/slow`, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    await expect(answer).rejects.toMatchObject({ name: 'AbortError' });
  });
});
