// kill -9 of the server with webhook deliveries pending: after a restart every event is delivered
// (distinct webhook-ids = events), and with --workers 3 no delivery is in flight twice at once.
// The server is the built binary; the receiver answers slowly so that deliveries queue up. The
// database kinds run at once: each waits out a killed sender's lease (30 s), and the waits overlap.
import { describe, it } from 'vitest';
import { MYSQL_URL, PG_URL, type TestDatabase, createTestDatabase, dbKinds } from '../helpers/db.js';
import { cleanEnv, embeddedDataDir, startServerProcess } from '../helpers/process.js';
import { eventually, startReceiver } from '../helpers/receiver.js';

const ADMIN_PASSWORD = 'crash-admin-pw';
const STARTUP_MS = 90_000;
const PUBLISHES = 40;

// Tests read arbitrary fields of answers.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(url: string, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe.concurrent.each(dbKinds())('webhook deliveries across kill -9 on %s', (kind) => {
  it('delivers every event after a crash with deliveries pending, and several workers never send one twice at once', async ({ expect }) => {
    let database: TestDatabase | undefined;
    const env: Record<string, string> = {
      REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
      REPO_MAN_BCRYPT_COST: '4',
      REPO_MAN_LOG_LEVEL: 'warn',
      REPO_MAN_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
      REPO_MAN_WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms,200ms',
    };
    if (kind === 'pglite') {
      env.REPO_MAN_DATA_DIR = embeddedDataDir();
    } else {
      database = await createTestDatabase(kind);
      const url = new URL(kind === 'mysql' ? MYSQL_URL! : PG_URL!);
      Object.assign(env, {
        REPO_MAN_DB_JDBC: kind === 'mysql' ? 'mariadb' : 'postgres',
        REPO_MAN_DB_HOST: url.hostname,
        REPO_MAN_DB_PORT: url.port || (kind === 'mysql' ? '3306' : '5432'),
        REPO_MAN_DB_USER: decodeURIComponent(url.username || (kind === 'mysql' ? 'root' : 'postgres')),
        REPO_MAN_DB_PASS: decodeURIComponent(url.password || ''),
        REPO_MAN_DB_DATABASE: database.settings.database,
      });
    }
    const receiver = await startReceiver(() => ({ status: 204, delayMs: 150 }));
    try {
      let server = await startServerProcess([], cleanEnv(env), STARTUP_MS);
      let token = (await call(server.url, 'POST', '/v1/authentication/generate-token', undefined, { username: 'admin', password: ADMIN_PASSWORD })).body.token;
      const created = await call(server.url, 'POST', '/v1/webhooks', token, { url: receiver.url, events: ['version.published'] });
      expect(created.status).toBe(201);
      for (let i = 0; i < PUBLISHES; i++) {
        const res = await call(server.url, 'POST', '/v1/repositories', token, { projectName: 'crash', branch: 'main', artifact: { groupId: 'g', artifactId: 'a', version: `1.0.${i}` } });
        expect(res.status).toBe(201);
      }
      server.child.kill('SIGKILL');
      await server.exited;
      const beforeRestart = new Set(receiver.received.map((r) => r.id)).size;
      expect(beforeRestart).toBeLessThan(PUBLISHES);

      const workers = kind === 'pglite' ? [] : ['--workers', '3'];
      server = await startServerProcess(workers, cleanEnv(env), STARTUP_MS);
      try {
        token = (await call(server.url, 'POST', '/v1/authentication/generate-token', undefined, { username: 'admin', password: ADMIN_PASSWORD })).body.token;
        for (let i = PUBLISHES; i < 2 * PUBLISHES; i++) {
          await call(server.url, 'POST', '/v1/repositories', token, { projectName: 'crash', branch: 'main', artifact: { groupId: 'g', artifactId: 'a', version: `1.0.${i}` } });
        }
        // The deliveries a killed sender held are taken over once their lease (30 s) ends.
        await eventually(() => new Set(receiver.received.map((r) => r.id)).size === 2 * PUBLISHES, 120_000, 'every event delivered');
        const events = await call(server.url, 'GET', '/v1/events?limit=1000&type=version.published', token);
        expect(events.body.events).toHaveLength(2 * PUBLISHES);
        expect(receiver.maxOverlapPerId()).toBe(1);
        expect(await server.stop()).toBe(0);
      } finally {
        await server.stop('SIGKILL');
      }
    } finally {
      await receiver.close();
      await database?.drop();
    }
  }, 400_000);
});
