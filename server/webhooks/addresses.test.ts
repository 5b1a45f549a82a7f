import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addressRules } from './addresses.js';
import { send } from './send.js';

describe('webhook address rules', () => {
  const rules = addressRules([]);

  it('refuse loopback, link-local, metadata, unspecified and multicast; allow private ranges', () => {
    for (const address of ['127.0.0.1', '::1', '169.254.169.254', 'fe80::1', '0.0.0.0', '::', '224.0.0.1', 'ff02::1', '::ffff:127.0.0.1', 'fd00:ec2::254']) {
      expect(rules.refusal(address), address).toBeDefined();
    }
    for (const address of ['10.1.2.3', '192.168.1.1', '172.16.0.1', 'fd12::1', '93.184.216.34']) {
      expect(rules.refusal(address), address).toBeUndefined();
    }
    expect(addressRules(['127.0.0.0/8']).refusal('127.0.0.1')).toBeUndefined();
  });

  it('check the address a name resolves to when connecting: localhost is refused at send, allowed with the flag', async () => {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://localhost:${(server.address() as AddressInfo).port}/hook`;
    try {
      const refused = await send({ url, id: 'a', body: '{}', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }, rules);
      expect(refused.error).toMatch(/loopback/);
      expect(requests).toBe(0);
      const literal = await send({ url: url.replace('localhost', '127.0.0.1'), id: 'a', body: '{}', secrets: [] }, rules);
      expect(literal.error).toMatch(/loopback/);
      const allowed = await send({ url, id: 'a', body: '{}', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }, addressRules(['127.0.0.0/8', '::1/128']));
      expect(allowed).toMatchObject({ status: 204, error: undefined });
      expect(requests).toBe(1);
    } finally {
      server.close();
    }
  });

  it('do not follow redirects: a 302 is a failed attempt', async () => {
    const server = http.createServer((_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const attempt = await send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, id: 'a', body: '{}', secrets: [] }, addressRules(['127.0.0.0/8']));
      expect(attempt).toMatchObject({ status: 302, error: 'the receiver answered 302' });
    } finally {
      server.close();
    }
  });
});
