// The built CLI's webhook, events and audit commands against the real server and a real receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { type Receiver, eventually, startReceiver } from '../helpers/receiver.js';
import { ADMIN_PASSWORD, type TestServer, startTestServer } from '../helpers/server.js';
import { assertBuilt, freshHome, run } from './run.js';

let server: TestServer;
let receiver: Receiver;
let home: string;

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer({ config: { webhooks: { ...loadConfig([], {}).webhooks, allowNetworks: ['127.0.0.0/8'] } } });
  receiver = await startReceiver();
  home = await freshHome();
  expect((await run(['login', '--url', server.url, '--username', 'admin', '--password-stdin'], { home, stdin: ADMIN_PASSWORD })).code).toBe(0);
}, 180_000);

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

describe('webhook, events and audit commands', () => {
  it('add prints the secret alone on stdout; list, ping, deliveries, rotate-secret, remove', async () => {
    const added = await run(['webhook', 'add', receiver.url, '--event', 'latest.moved', '--project', 'shop'], { home });
    expect(added.code).toBe(0);
    const secret = added.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await run(['webhook', 'list', '--json'], { home });
    expect(listed.stdout).not.toContain(secret);
    const [hook] = JSON.parse(listed.stdout).webhooks;
    expect(hook).toMatchObject({ url: receiver.url, events: ['latest.moved'], projects: ['shop'] });

    const pinged = await run(['webhook', 'ping', hook.id], { home });
    expect(pinged).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Delivered: the receiver answered 204/) });
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ type: 'ping' });

    const published = await run(['publish', '--project', 'shop', '--branch', 'main', '--group', 'g', '--artifact', 'a', '--version', '1.0.0', '--latest'], { home });
    expect(published.code).toBe(0);
    await eventually(() => receiver.received.length === 2, 20_000);
    const deliveries = await run(['webhook', 'deliveries', hook.id, '--json'], { home });
    expect(JSON.parse(deliveries.stdout).deliveries.map((d: { type: string; status: string }) => [d.type, d.status])).toEqual([
      ['latest.moved', 'delivered'],
      ['ping', 'delivered'],
    ]);

    const rotated = await run(['webhook', 'rotate-secret', hook.id], { home });
    expect(rotated.stdout.trim()).toMatch(/^whsec_/);
    expect(rotated.stdout.trim()).not.toBe(secret);
    expect((await run(['webhook', 'remove', hook.id], { home })).code).toBe(0);
    expect(JSON.parse((await run(['webhook', 'list', '--json'], { home })).stdout).webhooks).toEqual([]);
  }, 180_000);

  it('events --json prints NDJSON; --type filters', async () => {
    await run(['publish', '--project', 'shop', '--branch', 'main', '--group', 'g', '--artifact', 'a', '--version', '1.0.1', '--latest'], { home });
    const events = await run(['events', '--json', '--type', 'latest.moved'], { home });
    expect(events.code).toBe(0);
    const lines = events.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((e) => [e.type, e.data.from, e.data.to])).toEqual([
      ['latest.moved', null, '1.0.0'],
      ['latest.moved', '1.0.0', '1.0.1'],
    ]);
    expect(events.stderr).toMatch(/next: \d+/);
  });

  it('audit lists what was done, and refuses a bad --since', async () => {
    const audit = await run(['audit', '--action', 'webhook.created', '--json'], { home });
    expect(JSON.parse(audit.stdout).entries).toEqual([expect.objectContaining({ action: 'webhook.created', outcome: 'ok', actor: expect.objectContaining({ username: 'admin' }) })]);
    const bad = await run(['audit', '--since', 'yesterday'], { home });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--since takes 7d/);
  });
});
