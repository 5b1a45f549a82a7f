// The delete, trash and retention commands through main(argv, deps) against a real server: exit
// codes, tables and --json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../cli/api/client.js';
import { runDelete } from '../../cli/commands/delete/delete.js';
import type { Deps } from '../../cli/deps.js';
import { main } from '../../cli/main.js';
import { AppError } from '../../common/errors.js';
import { fakeDeps } from '../cli/fakes.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { publishAsAdmin } from './services.js';

describe('delete, trash and retention commands', () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    server = await startTestServer();
    env = { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: await server.adminToken() };
  });
  afterAll(() => server?.close());

  async function cli(...args: string[]) {
    const deps = fakeDeps({ env });
    deps.api = createApi({ settings: deps.settings, env, now: deps.now, config: deps.config, log: () => {} });
    const code = await main(['node', 'repoadmin', ...args], deps);
    return { code, stdout: deps.io.stdoutText(), stderr: deps.io.stderrText() };
  }
  const record = (version: string, latestVersion = false) => ({
    projectName: 'shop', branch: 'feature/x', artifact: { groupId: 'com.acme', artifactId: 'app', version }, latestVersion,
  });

  it('delete by uid and by coordinates, --force for a latest, trash list and restore', async () => {
    const { uid } = await publishAsAdmin(server, record('1.0.0'));
    await publishAsAdmin(server, record('2.0.0', true));
    expect(await cli('delete', uid)).toMatchObject({ code: 0 });
    const coordinates = ['--project', 'shop', '--branch', 'feature/x', '--group', 'com.acme', '--artifact', 'app', '--version', '2.0.0'];
    const refused = await cli('delete', ...coordinates);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/latest/);
    expect((await cli('delete', ...coordinates, '--force')).code).toBe(0);
    expect((await cli('delete', '--project', 'shop')).code).toBe(2);
    expect((await cli('delete', uid)).code).not.toBe(0);

    const listed = await cli('trash', 'list', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).records.map((r: { version: string }) => r.version)).toEqual(['2.0.0', '1.0.0']);
    expect((await cli('trash', 'list')).stdout).toMatch(/1\.0\.0/);
    expect(await cli('trash', 'restore', uid)).toMatchObject({ code: 0, stderr: expect.stringMatching(/Restored com\.acme:app:1\.0\.0/) });
  });

  it("a refusal that needs force names the command's --force, not the API's force=true", async () => {
    // A key of its own (branch main): the retention test below counts the records of feature/*.
    const { uid } = await publishAsAdmin(server, { ...record('5.0.0', true), branch: 'main' });
    const byUid = await cli('delete', uid);
    expect(byUid.code).toBe(1);
    expect(byUid.stderr).toContain(`record ${uid} is its key's latest record: delete it with --force`);
    const byCoordinates = await cli('delete', '--project', 'shop', '--branch', 'main', '--group', 'com.acme', '--artifact', 'app', '--version', '5.0.0');
    expect(byCoordinates.code).toBe(1);
    expect(byCoordinates.stderr).toContain("com.acme:app:5.0.0 on shop main is its key's latest record: delete it with --force");
    for (const refused of [byUid, byCoordinates]) expect(refused.stderr).not.toContain('force=true');
    expect((await cli('delete', uid, '--force')).code).toBe(0);
  });

  it('an immutable version refused without force names --force too', async () => {
    const refusal = new AppError('conflict', 'version 1.0.0 is immutable on this server: delete it with force=true', { reason: 'immutable_version' });
    const api = { deleteVersion: () => Promise.reject(refusal) } as unknown as Deps['api'];
    await expect(runDelete({ uid: 'u-1', force: false }, { api })).rejects.toMatchObject({
      code: 'conflict',
      message: 'record u-1 has a version that is immutable on this server: delete it with --force',
    });
    // Any other refusal passes as the server said it.
    const other = new AppError('forbidden', 'user x may delete only records of project "a", not "b"');
    await expect(runDelete({ uid: 'u-1', force: false }, { api: { deleteVersion: () => Promise.reject(other) } as unknown as Deps['api'] })).rejects.toBe(other);
  });

  it('retention add, run --dry-run (a table), enable, run, list, disable, remove', async () => {
    for (const v of ['3.0.0', '3.1.0', '3.2.0']) await publishAsAdmin(server, record(v));
    const added = await cli('retention', 'add', 'features', '--branch', 'feature/*', '--keep-last', '1', '--older-than', '0d');
    expect(added.code).toBe(2);
    expect((await cli('retention', 'add', 'features', '--branch', 'feature/*', '--keep-last', '1')).code).toBe(0);
    expect((await cli('retention', 'enable', 'features')).code).not.toBe(0);
    const dry = await cli('retention', 'run', 'features', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/3\.0\.0/);
    expect(dry.stderr).toMatch(/would delete 3, keeps 1/);
    expect((await cli('retention', 'enable', 'features')).code).toBe(0);
    const list = await cli('retention', 'list', '--json');
    expect(JSON.parse(list.stdout).policies).toMatchObject([{ name: 'features', enabled: true, keepLast: 1 }]);
    const ran = await cli('retention', 'run', 'features', '--json');
    expect(JSON.parse(ran.stdout)).toMatchObject({ dryRun: false, deleted: 3 });
    expect((await cli('retention', 'disable', 'features')).code).toBe(0);
    expect((await cli('retention', 'remove', 'features')).code).toBe(0);
    expect((await cli('retention', 'remove', 'features')).code).not.toBe(0);
  });
});
