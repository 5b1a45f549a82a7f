import { execFile } from 'node:child_process';
import { mkdtemp, readFile, stat, chmod, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDir, fileConfig } from './store.js';
import { normalizeUrl } from './url.js';

const login = (url: string, username = 'admin') => ({ url, username, userId: 'id', token: `token-${username}`, expiresAt: '2030-01-01T00:00:00.000Z' });

describe('config store', () => {
  it('lives in REPOADMIN_CONFIG_DIR, else XDG_CONFIG_HOME/repoadmin, else ~/.config/repoadmin', () => {
    expect(configDir({ REPOADMIN_CONFIG_DIR: '/a', XDG_CONFIG_HOME: '/b', HOME: '/h' })).toBe('/a');
    expect(configDir({ XDG_CONFIG_HOME: '/b', HOME: '/h' })).toBe('/b/repoadmin');
    expect(configDir({ HOME: '/h' })).toBe('/h/.config/repoadmin');
  });

  it('writes the file with mode 0600 in a 0700 folder, also over a file that was readable by others', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'config-')), 'repoadmin');
    const store = fileConfig({ REPOADMIN_CONFIG_DIR: dir });
    await store.save(login('http://a:1'));
    const path = await store.path();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await chmod(path, 0o644);
    await store.save(login('http://b:2'));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('keeps several servers; the last login is the current one; reading creates no file', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'config-')), 'repoadmin');
    const store = fileConfig({ REPOADMIN_CONFIG_DIR: dir });
    expect(await store.current()).toBeUndefined();
    await expect(stat(join(dir, 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    await store.save(login('http://a:1', 'alice'));
    await store.save(login('http://b:2', 'bob'));
    const again = fileConfig({ REPOADMIN_CONFIG_DIR: dir });
    expect((await again.current())?.username).toBe('bob');
    expect((await again.get('http://a:1'))?.username).toBe('alice');
    expect(await again.remove('http://b:2')).toMatchObject({ username: 'bob' });
    expect(JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'))).toEqual({ servers: { 'http://a:1': login('http://a:1', 'alice') } });
  });

  it('completes a stored login with its project and role, leaving the current server, and not a login replaced meanwhile', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'config-')), 'repoadmin');
    const store = fileConfig({ REPOADMIN_CONFIG_DIR: dir });
    await store.save(login('http://a:1', 'alice'));
    await store.save(login('http://b:2', 'bob'));
    await store.complete('http://a:1', 'token-alice', { projectName: 'shop', role: 'ROLE_USER' });
    const again = fileConfig({ REPOADMIN_CONFIG_DIR: dir });
    expect(await again.get('http://a:1')).toEqual({ ...login('http://a:1', 'alice'), projectName: 'shop', role: 'ROLE_USER' });
    expect((await again.current())?.url).toBe('http://b:2');
    // Another login to b since the token was read: what was learnt about the old token is not its.
    await store.complete('http://b:2', 'token-of-before', { projectName: 'other', role: 'ROLE_USER' });
    await store.complete('http://c:3', 'token-carol', { projectName: 'other', role: 'ROLE_USER' });
    expect(await again.get('http://b:2')).toEqual(login('http://b:2', 'bob'));
    expect(await again.get('http://c:3')).toBeUndefined();
  });

  it('reads nothing, and makes no folder, where the folder cannot be made (a pipeline with no writable HOME)', async () => {
    const blocker = join(await mkdtemp(join(tmpdir(), 'config-')), 'a-file');
    await writeFile(blocker, '');
    const store = fileConfig({ REPOADMIN_CONFIG_DIR: join(blocker, 'repoadmin') });
    expect(await store.current()).toBeUndefined();
    expect(await store.get('http://a:1')).toBeUndefined();
    expect(await store.remove('http://a:1')).toBeUndefined();
    await expect(store.save(login('http://a:1'))).rejects.toMatchObject({ code: 'ENOTDIR' });

    const dir = join(await mkdtemp(join(tmpdir(), 'config-')), 'repoadmin');
    expect(await fileConfig({ REPOADMIN_CONFIG_DIR: dir }).current()).toBeUndefined();
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('keeps every server when several processes log in at once', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'config-')), 'repoadmin');
    const store = new URL('./store.ts', import.meta.url).pathname;
    const child = (n: number) =>
      new Promise<void>((resolve, reject) => {
        const script = `import { fileConfig } from ${JSON.stringify(store)};
          const s = fileConfig({ REPOADMIN_CONFIG_DIR: ${JSON.stringify(dir)} });
          for (let i = 0; i < 10; i++) await s.save({ url: 'http://p${n}-' + i + ':1', username: 'u', userId: 'id', token: 't', expiresAt: null });`;
        execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], (error) => (error ? reject(error) : resolve()));
      });
    await Promise.all([0, 1, 2, 3].map(child));
    const stored = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')).servers;
    expect(Object.keys(stored)).toHaveLength(40);
    await expect(stat(join(dir, 'config.json.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 30_000);

  it('normalizes server addresses so one server has one key', () => {
    expect(normalizeUrl('localhost:9090/')).toBe('http://localhost:9090');
    expect(normalizeUrl('https://reg.example.com/base/')).toBe('https://reg.example.com/base');
    expect(() => normalizeUrl('ftp://x')).toThrow(/http or https/);
  });

  it('a config file that is not JSON is named, with what to do', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'config-'));
    await writeFile(join(dir, 'config.json'), '{bad');
    await expect(fileConfig({ REPOADMIN_CONFIG_DIR: dir }).current()).rejects.toMatchObject({
      message: expect.stringMatching(new RegExp(`^cannot read the config file ${join(dir, 'config.json')} \\(.+\\): fix it, or delete it and run repoadmin login$`)),
    });
  });
});
