// A record's columns are listed once (server/db/versions.ts, COLUMNS and RECORD_COLUMNS): the
// versions table and its trash have exactly those, on every kind, so a record moves to the trash and
// back whole; and no other module of the code writes a second list of them (the migrations, frozen,
// keep their own).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrateLatest, openDatabase } from '../../server/db/connect.js';
import { RECORD_COLUMNS } from '../../server/db/versions.js';
import type { DbKind } from '../../server/config.js';
import { createTestDatabase, dbKinds } from '../helpers/db.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

type Db = Awaited<ReturnType<typeof openDatabase>>['db'];

/** The columns of a table, from the catalogue. */
async function columnsOf(db: Db, kind: DbKind, table: string): Promise<string[]> {
  if (kind === 'mysql') {
    const [rows] = await db.raw('select column_name as name from information_schema.columns where table_schema = database() and table_name = ?', [table]);
    return (rows as { name: string }[]).map((r) => r.name).sort();
  }
  const { rows } = await db.raw("select column_name as name from information_schema.columns where table_schema = 'public' and table_name = ?", [table]);
  return (rows as { name: string }[]).map((r) => r.name).sort();
}

describe.each(dbKinds())('the columns of a record on %s', (kind) => {
  it('are the columns of versions and of versions_trash, beside each table own', async () => {
    const database = await createTestDatabase(kind);
    const opened = await openDatabase(database.settings);
    try {
      await migrateLatest(opened.db);
      const record = [...RECORD_COLUMNS].sort();
      // versions: its id, and on MariaDB/MySQL the generated column of its index of latest records.
      const versionsOwn = ['id', ...(kind === 'mysql' ? ['latest_marker'] : [])];
      expect((await columnsOf(opened.db, kind, 'versions')).filter((c) => !versionsOwn.includes(c))).toEqual(record);
      expect((await columnsOf(opened.db, kind, 'versions_trash')).filter((c) => !['id', 'deleted_at', 'deleted_by'].includes(c))).toEqual(record);
    } finally {
      await opened.close();
      await database.drop();
    }
  });
});

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Quoted names one after another, separated by commas: an array of names, or the arguments of a select. */
const NAME_RUN = /(['"`])[a-z_]+\1(?:\s*,\s*(['"`])[a-z_]+\2)+/g;

/**
 * Where the code writes a list that names at least half of a record's columns: a column list of
 * the record (a key or the coordinates name fewer).
 */
function columnLists(): string[] {
  const found: string[] = [];
  const record = new Set(RECORD_COLUMNS);
  for (const layer of ['server', 'common', 'cli', 'bench']) {
    for (const file of tsFiles(path.join(ROOT, layer))) {
      const relative = path.relative(ROOT, file).split(path.sep).join('/');
      if (relative.startsWith('server/db/migrations/')) continue;
      for (const run of fs.readFileSync(file, 'utf8').matchAll(NAME_RUN)) {
        const names = new Set([...run[0].matchAll(/['"`]([a-z_]+)['"`]/g)].map((m) => m[1]!));
        if ([...names].filter((n) => record.has(n)).length * 2 >= record.size) found.push(relative);
      }
    }
  }
  return found;
}

describe('the column list of a record', () => {
  it('is written once, in server/db/versions.ts', () => {
    expect(columnLists()).toEqual(['server/db/versions.ts']);
  });
});
