// The trash migration runs again safely after a start interrupted part-way (MariaDB and MySQL
// commit each DDL statement on its own), and lets tokens have the scope delete. The immutable
// versions migration keeps the content of what is in the trash when it runs.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/connect.js';
import { MIGRATION_CONFIG } from '../../server/db/migrations/index.js';
import * as trash from '../../server/db/migrations/20261125200000_trash.js';
import * as immutableVersions from '../../server/db/migrations/20261127000000_immutable_versions.js';
import { createTestDatabase, dbKinds } from '../helpers/db.js';

describe.each(dbKinds())('the trash migration on %s', (kind) => {
  it('runs again over a part-done or a finished run of itself', async () => {
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

describe.each(dbKinds())('the immutable versions migration on %s', (kind) => {
  it('keeps the content of the records in the trash, the earliest published of each coordinates, and runs again safely', async () => {
    const database = await createTestDatabase(kind);
    const opened = await openDatabase(database.settings);
    try {
      const { db } = opened;
      await db.migrate.latest(MIGRATION_CONFIG);
      await immutableVersions.down(db);
      const trashed = (uid: string, version: string, repositoryUrl: string, createdAt: string) => ({
        uid,
        project_name: 'p',
        branch: 'main',
        group_id: 'g',
        artifact_id: 'a',
        version,
        version_key: version,
        repository_url: repositoryUrl,
        creation_date: new Date('2026-05-01T10:00:00Z'),
        type: 'jar',
        latest_version: false,
        description: null,
        created_at: new Date(createdAt),
        updated_at: new Date(createdAt),
        deleted_at: new Date('2026-05-20T10:00:00Z'),
        deleted_by: 'admin',
      });
      await db('versions_trash').insert([
        trashed('00000000-0000-4000-8000-0000000000b1', '1.0.0', 'https://later.example', '2026-05-10T10:00:00Z'),
        trashed('00000000-0000-4000-8000-0000000000a1', '1.0.0', 'https://first.example', '2026-05-02T10:00:00Z'),
        trashed('00000000-0000-4000-8000-0000000000c1', '1.1.0', 'https://other.example', '2026-05-03T10:00:00Z'),
      ]);
      await immutableVersions.up(db);
      await immutableVersions.up(db);
      const kept = await db('immutable_versions').select('version', 'repository_url', 'uid').orderBy('version');
      expect(kept).toEqual([
        { version: '1.0.0', repository_url: 'https://first.example', uid: '00000000-0000-4000-8000-0000000000a1' },
        { version: '1.1.0', repository_url: 'https://other.example', uid: '00000000-0000-4000-8000-0000000000c1' },
      ]);
    } finally {
      await opened.close();
      await database.drop();
    }
  });
});
