import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type AddressRules, addressRules } from './addresses.js';
import { keepAliveAgents, retryAfterMs, send } from './send.js';

describe('a delivery attempt', () => {
  it('gives up on a receiver that does not answer within its time', async () => {
    const server = http.createServer(() => {
      // Never answers.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const attempt = await send({ url, id: 'a', body: '{}', secrets: [] }, addressRules(['127.0.0.0/8']), 300);
      expect(attempt.error).toBe('no answer within 0.3 s');
      expect(attempt.status).toBeUndefined();
      expect(attempt.durationMs).toBeGreaterThanOrEqual(290);
      expect(attempt.durationMs).toBeLessThan(5_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Mon, 01 Jun 2026 12:01:30 GMT', now)).toBe(90_000);
    expect(retryAfterMs('Mon, 01 Jun 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it('over kept-alive connections: reuses an open one, and checks every new one with the address rules', async () => {
    let connections = 0;
    const server = http.createServer((_req, res) => res.writeHead(204).end());
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://localhost:${(server.address() as AddressInfo).port}/hook`;
    // localhost allowed at first; then refused, as a name that re-resolves to a refused address would be.
    const allow = addressRules(['127.0.0.0/8', '::1/128']);
    const deny = addressRules([]);
    let refuse = false;
    const lookups: string[] = [];
    const rules: AddressRules = {
      refusal: allow.refusal,
      lookup: (hostname, options, callback) => {
        lookups.push(hostname);
        (refuse ? deny : allow).lookup(hostname, options, callback);
      },
    };
    const agents = keepAliveAgents(rules);
    const attempt = (id: string) => send({ url, id, body: '{}', secrets: [] }, rules, 5_000, agents);
    try {
      for (let i = 0; i < 5; i++) expect(await attempt(`a${i}`)).toMatchObject({ status: 204, error: undefined });
      expect(connections).toBe(1);
      expect(lookups).toEqual(['localhost']);
      refuse = true;
      // The open connection is to the address checked when it was opened.
      expect(await attempt('b')).toMatchObject({ status: 204 });
      expect(connections).toBe(1);
      // A new one goes through the rules again.
      server.closeAllConnections();
      // Once the agent has seen its kept-alive connection close (it then holds no free one).
      while (Object.keys(agents.http.freeSockets).length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const refused = await attempt('c');
      expect(refused.error).toMatch(/loopback/);
      expect(refused.status).toBeUndefined();
      expect(lookups).toHaveLength(2);
      expect(connections).toBe(1);
    } finally {
      agents.destroy();
      server.closeAllConnections();
      server.close();
    }
  });

  it('over a kept-alive connection the receiver drops unanswered: the attempt is made again on a new connection', async () => {
    // A receiver that answers the first request of a connection and drops the connection at the second.
    let connections = 0;
    let requests = 0;
    const server = net.createServer((socket) => {
      connections++;
      let seen = 0;
      socket.on('data', (chunk) => {
        if (!chunk.toString('latin1').startsWith('POST ')) return;
        requests++;
        if (++seen === 1) socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
        else socket.resetAndDestroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const rules = addressRules(['127.0.0.0/8']);
    const agents = keepAliveAgents(rules);
    try {
      expect(await send({ url, id: 'a', body: '{}', secrets: [] }, rules, 5_000, agents)).toMatchObject({ status: 204 });
      expect(await send({ url, id: 'b', body: '{}', secrets: [] }, rules, 5_000, agents)).toMatchObject({ status: 204, error: undefined });
      expect({ connections, requests }).toEqual({ connections: 2, requests: 3 });
    } finally {
      agents.destroy();
      server.close();
    }
  });
});
