// The real app on 127.0.0.1, an ephemeral port and a real database, for tests.
import http from 'node:http';
import { Writable } from 'node:stream';
import type { Knex } from 'knex';
import { type DbKind, type ServerConfig, loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/log.js';
import { DEFAULT_ADMIN_ID } from '../../server/services/users.js';
import type { Scheduler } from '../../server/schedule.js';
import { type StartOptions, startServer } from '../../server/start.js';
import { type TestDatabase, createServerTestDatabase } from './db.js';
import { sendRequest } from './http.js';

/** The administrator's password in test servers (unless `mustChangeAdminPassword`). */
export const ADMIN_PASSWORD = 'admin-secret-1';
export { DEFAULT_ADMIN_ID };

export interface TestServerOptions {
  kind?: DbKind;
  /** Settings over the defaults (bcrypt cost 4 for speed). */
  config?: Partial<Omit<ServerConfig, 'db' | 'jwt'>> & { jwt?: Partial<ServerConfig['jwt']> };
  /** Start like a real first start: admin/password, which must be changed. */
  mustChangeAdminPassword?: boolean;
  /** Reuse a database (for restarts); it is not dropped on close. */
  database?: TestDatabase;
  /** The server's clock (token expiry, last use, login windows). */
  now?: () => Date;
  /** The scheduler's tick and lease lengths (server/schedule.ts). */
  schedule?: StartOptions['schedule'];
}

export interface TestServer {
  url: string;
  db: Knex;
  config: ServerConfig;
  /** Every log line the server wrote. */
  logs: string[];
  database: TestDatabase;
  scheduler: Scheduler;
  close(): Promise<void>;
  /** A token of the administrator. */
  adminToken(): Promise<string>;
  /** JSON request helper: returns status, headers and parsed body. */
  request(method: string, path: string, options?: { body?: unknown; token?: string; headers?: Record<string, string> }): Promise<TestResponse>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // Tests read arbitrary fields of answers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const kind = options.kind ?? 'pglite';
  const ownDatabase = !options.database;
  const database = options.database ?? (await createServerTestDatabase(kind));
  const base = loadConfig([], {});
  const config: ServerConfig = {
    ...base,
    port: 0,
    bcryptCost: 4,
    logLevel: 'info',
    adminPassword: options.mustChangeAdminPassword ? undefined : ADMIN_PASSWORD,
    ...options.config,
    jwt: { ...base.jwt, ...options.config?.jwt },
    db: database.settings,
  };
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const log = createLogger(config.logLevel, sink);
  const server = await startServer(config, { log, host: '127.0.0.1', now: options.now, schedule: options.schedule });
  const url = `http://127.0.0.1:${server.port}`;

  // One keep-alive agent per server, destroyed with it; sendRequest (./http.ts) says why not fetch.
  const agent = new http.Agent({ keepAlive: true });
  const request: TestServer['request'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    let body: Buffer | undefined;
    if (opts.body !== undefined) {
      body = Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['Content-Type'] ??= 'application/json';
      headers['Content-Length'] = String(body.length);
    }
    // The URL parser encodes and normalises the path as fetch would.
    const target = new URL(url + path);
    const { status, rawHeaders, text } = await sendRequest(agent, { method, host: target.hostname, port: target.port, path: target.pathname + target.search, headers }, body);
    const responseHeaders = new Headers();
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) responseHeaders.append(rawHeaders[i] as string, rawHeaders[i + 1] as string);
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status, headers: responseHeaders, body: parsed, text };
  };

  let adminToken: string | undefined;
  return {
    url,
    db: server.db,
    config,
    logs,
    database,
    scheduler: server.scheduler,
    request,
    async adminToken() {
      if (adminToken) return adminToken;
      const res = await request('POST', '/v1/authentication/generate-token', {
        body: { username: 'admin', password: ADMIN_PASSWORD },
      });
      if (res.status !== 200) throw new Error(`admin login failed: ${res.status} ${res.text}`);
      adminToken = res.body.token as string;
      return adminToken;
    },
    async close() {
      agent.destroy();
      await server.stop(0);
      if (ownDatabase) await database.drop();
      // No endpoint may answer 500 in the test suite: the log says why where one did.
      const failures = logs.filter((line) => /"status":500\b/.test(line));
      if (failures.length > 0) throw new Error(`the server answered 500:\n${failures.join('\n')}`);
    },
  };
}
