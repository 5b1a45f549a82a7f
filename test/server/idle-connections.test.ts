// One client holding thousands of connections that send nothing must not use up the server's file
// descriptors: the server closes them on time (api.md "Faults": 10 s to send a request head, 5 s
// idle keep-alive), and a normal request gets its answer meanwhile. The server is the built binary.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_LIMITS } from '../../server/http-server.js';
import { type ServerProcess, cleanEnv, startServerProcess, tempDir } from '../helpers/process.js';

const SILENT = 2_000;
const HALF_HEADERS = 200;
const KEPT_ALIVE = 200;

interface Watched {
  socket: net.Socket;
  /** When the server closed it, in ms after the start; undefined while open. */
  closedAt?: number;
}

function open(port: number, started: number, first?: string): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const watched: Watched = { socket: net.connect(port, '127.0.0.1') };
    watched.socket.once('connect', () => {
      if (first) watched.socket.write(first);
      resolve(watched);
    });
    watched.socket.once('error', (error) => {
      if (watched.closedAt === undefined) reject(error);
    });
    watched.socket.on('data', () => {});
    watched.socket.once('close', () => {
      watched.closedAt = performance.now() - started;
    });
  });
}

describe('crowded sockets', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess([], cleanEnv({ REPO_MAN_DATA_DIR: tempDir(), REPO_MAN_LOG_LEVEL: 'warn', REPO_MAN_BCRYPT_COST: '4' }));
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
  });

  it(`closes ${SILENT} silent connections after 10 s and idle keep-alive ones after 5 s, answering others meanwhile`, async () => {
    const port = Number(new URL(server.url).port);
    const started = performance.now();
    const sockets: Watched[] = [];
    for (let i = 0; i < SILENT; i += 100) {
      sockets.push(...(await Promise.all(Array.from({ length: 100 }, () => open(port, started)))));
    }
    const halves = await Promise.all(Array.from({ length: HALF_HEADERS }, () => open(port, started, 'GET /health HTTP/1.1\r\nHost: x\r\n')));
    const kept = await Promise.all(Array.from({ length: KEPT_ALIVE }, () => open(port, started, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n')));
    const opened = performance.now() - started;

    // While they are all open, a normal client is answered at once.
    const asked = performance.now();
    const ready = await fetch(`${server.url}/health/ready`);
    const search = await fetch(`${server.url}/v1/repositories/search`, { method: 'POST' });
    expect(ready.status).toBe(200);
    expect(search.status).toBe(200);
    expect(performance.now() - asked).toBeLessThan(2_000);

    const all = [...sockets, ...halves, ...kept];
    const deadline = HTTP_LIMITS.headersTimeout + HTTP_LIMITS.connectionsCheckingInterval + opened + 2_000;
    while (all.some((w) => w.closedAt === undefined) && performance.now() - started < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const stillOpen = all.filter((w) => w.closedAt === undefined).length;
    for (const w of all) w.socket.destroy();
    expect(stillOpen).toBe(0);

    const latest = (list: Watched[]) => Math.max(...list.map((w) => w.closedAt!));
    const earliest = (list: Watched[]) => Math.min(...list.map((w) => w.closedAt!));
    // Keep-alive connections go first, after 5 s (and at most the second Node adds); the others after 10 s.
    expect(latest(kept)).toBeLessThan(opened + HTTP_LIMITS.keepAliveTimeout + 3_000);
    expect(earliest(sockets)).toBeGreaterThan(HTTP_LIMITS.headersTimeout - 1_000);
    expect(latest(sockets)).toBeLessThan(deadline);
    expect(latest(halves)).toBeLessThan(deadline);

    // And the server still serves.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  }, 60_000);
});
