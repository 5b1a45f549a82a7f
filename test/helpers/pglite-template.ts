// One embedded database made and migrated once per test run (vitest's global setup), which every
// PGlite test database then starts from as a copy of its folder: creating a PGlite database
// (initdb) takes seconds on a busy machine, opening a copied folder well under one. The copy is
// opened the way a server opens any existing data folder.
//
// The run's temporary folder also holds every other temporary file of the run: TMPDIR names it
// before the worker processes start, so the test files, the servers and commands they start, and
// what those make there go with it at the end. The workers' own clean-up on exit does not run when
// the runner ends them with a signal, and a run left about 0.75 GB behind.
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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-test-'));
  // Others may pass through it, as through the system's own: each folder made in it is still 0700,
  // and the tests of the data folder's modes read as another user below it.
  fs.chmodSync(root, 0o755);
  const outerTmp = process.env.TMPDIR;
  process.env.TMPDIR = root;
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
  return async () => {
    if (outerTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outerTmp;
    // A child a test stopped (a database being created, say) may still be writing for a moment.
    // Node 24's rmSync has then returned with the folder partly removed and no error (a full run
    // left 72 of its 116 entries): the removal is checked, and done again while anything is left.
    for (let attempt = 0; fs.existsSync(root) && attempt < 20; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 250));
      await fs.promises.rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
    if (fs.existsSync(root)) console.warn(`the run's temporary folder ${root} could not be removed`);
  };
}
