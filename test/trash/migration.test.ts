// The trash migration runs again safely after a start interrupted part-way (MariaDB and MySQL
// commit each DDL statement on its own), and lets tokens have the scope delete.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/connect.js';
import { MIGRATION_CONFIG } from '../../server/db/migrations/index.js';
import * as trash from '../../server/db/migrations/20261125200000_trash.js';
import { createTestDatabase, dbKinds } from '../helpers/db.js';

describe.each(dbKinds())('the trash migration on %s', (kind) => {
  it('runs again over a part-done or a finished run of itself', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase(kind);
    const opened = await openDatabase(database.settings);
    try {
      const { db } = opened;
      await db.migrate.latest(MIGRATION_CONFIG);
      await trash.up(db);
      await db.schema.dropTable('retention_runs');
      await trash.up(db);
      expect(await db.schema.hasTable('retention_runs')).toBe(true);
      await db('users').insert({ id: '00000000-0000-4000-8000-00000000000a', username: 'u', password_hash: 'x', role: 'ROLE_USER' });
      const token = { user_id: '00000000-0000-4000-8000-00000000000a', name: 't', created_at: new Date() };
      await db('tokens').insert({ ...token, id: '00000000-0000-4000-8000-00000000000b', scope: 'delete', token_hash: 'a'.repeat(64) });
      await expect(db('tokens').insert({ ...token, id: '00000000-0000-4000-8000-00000000000c', name: 'v', scope: 'erase', token_hash: 'b'.repeat(64) })).rejects.toThrow();
    } finally {
      await opened.close();
      await database.drop();
    }
  });
});
