import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addressRules, urlRefusal } from './addresses.js';
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

  it('judge an IPv6 address that carries an IPv4 one as that address, as the URL parser writes it too', () => {
    // IPv4-compatible (`::127.0.0.1`), IPv4-mapped and NAT64, dotted and as `new URL` turns them into hex.
    for (const address of ['::127.0.0.1', '::7f00:1', '::ffff:7f00:1', '64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '::a9fe:a9fe', '0:0:0:0:0:ffff:7f00:1']) {
      expect(rules.refusal(address), address).toBeDefined();
    }
    for (const address of ['::a00:1', '::ffff:a00:1', '64:ff9b::5db8:d822', '2001:db8::7f00:1']) {
      expect(rules.refusal(address), address).toBeUndefined();
    }
    expect(addressRules(['127.0.0.0/8']).refusal('::7f00:1')).toBeUndefined();
  });

  it('refuse the cloud metadata addresses outside link-local, and name the server setting that allows an address', () => {
    for (const address of ['100.100.100.200', '168.63.129.16']) expect(rules.refusal(address), address).toMatch(/cloud metadata/);
    expect(rules.refusal('100.100.100.201')).toBeUndefined();
    expect(rules.refusal('127.0.0.1')).toMatch(/server setting --repoadmin_webhook_allow_networks \(REPO_MAN_WEBHOOK_ALLOW_NETWORKS\)/);
  });

  it('refuse a URL as its deliveries would: a literal address, a name resolving to refused addresses only', async () => {
    expect(await urlRefusal(rules, new URL('http://[::127.0.0.1]/'))).toMatch(/^127\.0\.0\.1 is a loopback address/);
    expect(await urlRefusal(rules, new URL('http://100.100.100.200/latest/meta-data/'))).toMatch(/cloud metadata/);
    const localhost = await urlRefusal(rules, new URL('http://localhost:9/hook'));
    expect(localhost).toMatch(/^localhost resolves to an address that is a loopback address/);
    expect(localhost).toContain('server setting --repoadmin_webhook_allow_networks');
    expect(await urlRefusal(addressRules(['127.0.0.0/8', '::1/128']), new URL('http://localhost:9/hook'))).toBeUndefined();
    // A name that does not resolve now is checked at each delivery instead.
    expect(await urlRefusal(rules, new URL('https://hooks.invalid/x'))).toBeUndefined();
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
