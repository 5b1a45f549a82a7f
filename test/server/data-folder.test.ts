// The embedded database's folder holds the JWT secret and the password hashes (in its tables and
// its WAL): only the server's user may read it, whatever the umask.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPasswords } from '../../server/auth/passwords.js';
import { loadConfig } from '../../server/config.js';
import { openDatabase } from '../../server/db/connect.js';
import { prepareDatabase } from '../../server/setup.js';
import { tempDir } from '../helpers/process.js';

/** Every file and folder under `dir`, with its permission bits. */
function modes(dir: string): { file: string; mode: number }[] {
  const found = [{ file: dir, mode: fs.statSync(dir).mode & 0o777 }];
  for (const entry of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, entry);
    found.push({ file, mode: fs.lstatSync(file).mode & 0o777 });
  }
  return found;
}

const openToOthers = (list: { file: string; mode: number }[]) =>
  list.filter((m) => (m.mode & 0o077) !== 0).map((m) => `${m.file} ${m.mode.toString(8)}`);

/** Starts the embedded database in `dataDir` as the server does, writes the secret and the admin, stops. */
async function firstStart(dataDir: string): Promise<string[]> {
  const config = { ...loadConfig([], { REPO_MAN_ADMIN_PASSWORD: 'folder-admin-pw' }), bcryptCost: 4 };
  const database = await openDatabase({ ...config.db, dataDir });
  try {
    await prepareDatabase(database.db, config, createPasswords(4));
    await database.db('versions').insert({
      uid: randomUUID(), project_name: 'p', branch: 'b', group_id: 'g', artifact_id: 'a',
      version: randomUUID(), version_key: '1', creation_date: new Date(), type: 'LIBRARY', latest_version: false,
    });
  } finally {
    await database.close();
  }
  return database.warnings;
}

/** Whether another local user (nobody) can read the file: only where this process may switch users. */
const asNobody = process.getuid?.() === 0 && spawnSync('runuser', ['-u', 'nobody', '--', 'true']).status === 0;
function nobodyCanRead(file: string): boolean {
  return spawnSync('runuser', ['-u', 'nobody', '--', 'cat', file], { stdio: 'ignore' }).status === 0;
}

/** Each test starts a new embedded database (initdb in a child process), one twice: 10 to 20 s each on a busy machine. */
const FIRST_START_TESTS_MS = 90_000;

describe('the embedded database folder', { timeout: FIRST_START_TESTS_MS }, () => {
  let umask: number;
  beforeEach(() => {
    umask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(umask);
  });

  it('is made 0700 with nothing in it open to others, under umask 022', async () => {
    const parent = tempDir();
    fs.chmodSync(parent, 0o755);
    const dataDir = path.join(parent, 'data');
    expect(await firstStart(dataDir)).toEqual([]);
    const list = modes(dataDir);
    expect(list.length).toBeGreaterThan(20);
    expect(list[0]!.mode).toBe(0o700);
    expect(openToOthers(list)).toEqual([]);
    if (asNobody) {
      const wal = list.find((m) => m.file.includes('pg_wal') && fs.statSync(m.file).isFile());
      expect(wal).toBeDefined();
      expect(nobodyCanRead(wal!.file)).toBe(false);
      // The check itself works: nobody can read an open file beside the folder.
      fs.writeFileSync(path.join(parent, 'open'), 'x');
      fs.chmodSync(path.join(parent, 'open'), 0o644);
      expect(nobodyCanRead(path.join(parent, 'open'))).toBe(true);
    }
  });

  it('tightens a folder left open by an earlier version, with a warning', async () => {
    const parent = tempDir();
    fs.chmodSync(parent, 0o755);
    const dataDir = path.join(parent, 'data');
    await firstStart(dataDir);
    // What an earlier server left behind under umask 022.
    for (const m of modes(dataDir)) fs.chmodSync(m.file, fs.statSync(m.file).isDirectory() ? 0o755 : 0o644);
    if (asNobody) expect(nobodyCanRead(path.join(dataDir, 'PG_VERSION'))).toBe(true);

    const warnings = await firstStart(dataDir);
    expect(warnings).toEqual([
      `the embedded database folder ${dataDir} was open to other users (mode 755): made it readable by this user only`,
    ]);
    expect(openToOthers(modes(dataDir))).toEqual([]);
    if (asNobody) expect(nobodyCanRead(path.join(dataDir, 'PG_VERSION'))).toBe(false);
  });
});

describe('a first start without a first password', () => {
  it('stops, naming REPO_MAN_ADMIN_PASSWORD, when REPO_MAN_REQUIRE_ADMIN_PASSWORD is true (as in the image)', async () => {
    const config = { ...loadConfig([], { REPO_MAN_REQUIRE_ADMIN_PASSWORD: 'true', REPO_MAN_DATA_DIR: 'memory://' }), bcryptCost: 4 };
    const database = await openDatabase(config.db);
    try {
      await expect(prepareDatabase(database.db, config, createPasswords(4))).rejects.toThrow(
        /first start: set REPO_MAN_ADMIN_PASSWORD \(or REPO_MAN_ADMIN_PASSWORD_FILE/,
      );
      expect(await database.db('users').count({ n: '*' })).toEqual([{ n: 0 }]);
      // With one, the same start goes on.
      await prepareDatabase(database.db, { ...config, adminPassword: 'image-admin-pw' }, createPasswords(4));
      expect(await database.db('users').pluck('username')).toEqual(['admin']);
    } finally {
      await database.close();
    }
  });
});
