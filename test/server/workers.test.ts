// `repoadmin server --workers N` speaks once for all its processes: where they listen, and that they stop.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, pgAvailable } from '../helpers/db.js';
import { cleanEnv, startServerProcess } from '../helpers/process.js';
import { skipping } from '../helpers/skip.js';

describe.skipIf(skipping('--workers messages', pgAvailable() ? undefined : 'REPOADMIN_TEST_PG_URL is not set'))('--workers 2', () => {
  it('says once, not once per process, that it is stopping and that it stopped', async () => {
    const database = await createTestDatabase('postgres');
    try {
      const { settings } = database;
      const env = cleanEnv({
        REPO_MAN_DB_JDBC: 'postgres', REPO_MAN_DB_HOST: settings.host, REPO_MAN_DB_PORT: String(settings.port),
        REPO_MAN_DB_USER: settings.user, REPO_MAN_DB_PASS: settings.password, REPO_MAN_DB_DATABASE: settings.database,
        REPO_MAN_ADMIN_PASSWORD: 'workers-admin-pw', REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'silent',
      });
      const server = await startServerProcess(['--workers', '2'], env, 60_000);
      expect(await server.stop('SIGTERM')).toBe(0);
      const lines = server.stderr().trim().split('\n');
      expect(lines.filter((l) => l.includes('listening on'))).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith('SIGTERM'))).toEqual(['SIGTERM: stopping 2 workers; finishing requests in flight']);
      expect(lines.filter((l) => l === 'stopped')).toHaveLength(1);
    } finally {
      await database.drop();
    }
  });
});
