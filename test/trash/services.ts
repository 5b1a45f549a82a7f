// Services over a test server's database, for tests that call the trash and retention services directly.
import pino from 'pino';
import type { Actor, Services } from '../../server/services/context.js';
import type { TestServer } from '../helpers/server.js';

export function servicesOf(server: TestServer, now: () => Date = () => new Date(), config: Partial<Services['config']> = {}): Services {
  return { db: server.db, config: { ...server.config, ...config }, log: pino({ level: 'silent' }), now } as Services;
}

export const ADMIN: Actor = { userId: '00000000-0000-4000-8000-000000000001', username: 'admin', role: 'ROLE_ADMIN', projectName: null, mustChangePassword: false };

export const userOf = (projectName: string): Actor => ({
  userId: '00000000-0000-4000-8000-000000000002',
  username: `user-of-${projectName}`,
  role: 'ROLE_USER',
  projectName,
  mustChangePassword: false,
});

/** Publishes a record as the administrator, over HTTP: its uid. */
export async function publishAsAdmin(server: TestServer, body: unknown): Promise<{ uid: string }> {
  const answer = await server.request('POST', '/v1/repositories', { token: await server.adminToken(), body });
  if (answer.status !== 200 && answer.status !== 201) throw new Error(`publish failed: ${answer.status} ${answer.text}`);
  return { uid: answer.body.uid as string };
}
