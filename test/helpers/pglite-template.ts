// One embedded database made and migrated once per test run (vitest's global setup), which every
// PGlite test database then starts from as a copy of its folder: creating a PGlite database
// (initdb) takes seconds on a busy machine, opening a copied folder well under one. The copy is
// opened the way a server opens any existing data folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { migrateLatest, openDatabase } from '../../server/db/connect.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder of the migrated embedded database that PGlite test databases copy. */
    pgliteTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-test-'));
  const template = path.join(root, 'template');
  const database = await openDatabase({
    kind: 'pglite', driver: '@electric-sql/pglite', host: '', port: 0, user: '', password: '', database: '',
    dataDir: template, connectTimeoutMs: 30_000, statementTimeoutMs: 60_000,
  });
  try {
    await migrateLatest(database.db);
  } finally {
    await database.close();
  }
  project.provide('pgliteTemplate', template);
  return () => fs.rmSync(root, { recursive: true, force: true });
}
