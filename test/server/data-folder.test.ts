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

/**
 * Each test starts a new embedded database (initdb in a child process), one twice: 10 to 20 s each
 * on a busy machine, and past 45 s each on a slower host with a core taken (CI, 2026-11-28). A guard
 * against a start that hangs, not a measure of speed, which the contract does not bound.
 */
const FIRST_START_TESTS_MS = 300_000;

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
  // A first start of the embedded database: seconds of CPU, minutes on busy cores; not a measure of speed.
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

describe('a first start interrupted', { timeout: FIRST_START_TESTS_MS }, () => {
  it('during initdb leaves nothing the next start cannot redo', async () => {
    const dataDir = path.join(tempDir(), 'data');
    // What a start killed while initdb worked leaves: a half-made database beside the lock.
    fs.mkdirSync(path.join(dataDir, '.repoadmin-initdb', 'new', 'base'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, '.repoadmin-initdb', 'new', 'postgresql.conf'), 'half');
    await firstStart(dataDir);
    expect(fs.existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, '.repoadmin-initdb'))).toBe(false);
  });

  it('while moving the new database into place is finished by the next start, with nothing lost', async () => {
    const dataDir = path.join(tempDir(), 'data');
    await firstStart(dataDir);
    // Back to the middle of the move: part of the database still in "done", PG_VERSION among it.
    const done = path.join(dataDir, '.repoadmin-initdb', 'done');
    fs.mkdirSync(done, { recursive: true });
    const entries = fs.readdirSync(dataDir).filter((e) => e !== 'repoadmin.lock' && e !== '.repoadmin-initdb').sort();
    for (const entry of entries.slice(0, Math.ceil(entries.length / 2)).concat('PG_VERSION')) {
      if (fs.existsSync(path.join(dataDir, entry))) fs.renameSync(path.join(dataDir, entry), path.join(done, entry));
    }
    expect(fs.existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(false);

    const config = { ...loadConfig([], { REPO_MAN_ADMIN_PASSWORD: 'folder-admin-pw' }), bcryptCost: 4 };
    const database = await openDatabase({ ...config.db, dataDir });
    try {
      expect(await database.db('versions').count({ n: '*' })).toEqual([{ n: 1 }]);
    } finally {
      await database.close();
    }
    expect(fs.existsSync(path.join(dataDir, '.repoadmin-initdb'))).toBe(false);
  });
});

describe('a data folder that cannot be one', () => {
  it('is named with the setting to fix', async () => {
    const file = path.join(tempDir(), 'data');
    fs.writeFileSync(file, 'not a folder');
    const config = loadConfig([], { REPO_MAN_DATA_DIR: file });
    await expect(openDatabase(config.db)).rejects.toThrow(
      `the embedded database folder ${file} is a file (or a path through a file), not a folder`,
    );
    await expect(openDatabase({ ...config.db, dataDir: path.join(file, 'below') })).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringContaining('--repoadmin_data_dir / REPO_MAN_DATA_DIR'),
    });
  });
});
