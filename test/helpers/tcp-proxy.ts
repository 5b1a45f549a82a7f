// A TCP proxy on 127.0.0.1 between the server and PostgreSQL that can pass, drop or reset, as
// Shopify's Toxiproxy does with its "timeout" toxic (data stops flowing, the connection stays
// open: what a dropped route or a firewall that discards packets looks like from the client) and
// its "reset_peer" toxic (a TCP RST, what a restarted host or a load balancer that gave up sends).
// Switching applies at once to the connections already open, as a network fault would.
// `dropWhenClientSends` times a fault to a moment of the protocol instead of the wall clock: the
// route goes down just as the client sends a given statement (Toxiproxy's toxics are timed by the
// test; this is the same fault, only placed exactly).
import net from 'node:net';

export type ProxyMode = 'pass' | 'drop' | 'reset';

export interface TcpProxy {
  port: number;
  mode: ProxyMode;
  set(mode: ProxyMode): void;
  /**
   * New connections go to `target` from now on; those open stay where they are (an address that
   * moves to another server, as a virtual IP or a DNS name does at a failover).
   */
  retarget(target: { host: string; port: number }): void;
  /** Switches to 'drop' the moment a client sends bytes containing `text`; that chunk is dropped too. */
  dropWhenClientSends(text: string): void;
  close(): Promise<void>;
}

export async function startTcpProxy(initialTarget: { host: string; port: number }): Promise<TcpProxy> {
  let target = initialTarget;
  let mode: ProxyMode = 'pass';
  let trigger: Buffer | undefined;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();

  const reset = (socket: net.Socket) => {
    if (!socket.destroyed) socket.resetAndDestroy();
  };

  const server = net.createServer((client) => {
    if (mode === 'reset') {
      reset(client);
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    // Data is forwarded only while passing; dropped data is gone, as on a broken route.
    client.on('data', (chunk: Buffer) => {
      if (trigger && chunk.includes(trigger)) {
        trigger = undefined;
        mode = 'drop';
      }
      if (mode === 'pass') upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (mode === 'pass') client.write(chunk);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    port: (server.address() as net.AddressInfo).port,
    get mode() {
      return mode;
    },
    retarget(next) {
      target = next;
    },
    dropWhenClientSends(text) {
      trigger = Buffer.from(text);
    },
    set(next) {
      trigger = undefined;
      mode = next;
      if (next === 'reset') {
        for (const { client, upstream } of pairs) {
          reset(client);
          reset(upstream);
        }
        pairs.clear();
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
