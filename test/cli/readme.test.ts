// The README's "First steps with the command line", run as written (through the built launcher)
// against a server on its first start, from an empty HOME.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, cleanEnv } from '../helpers/process.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { assertBuilt, freshHome } from './run.js';

const exec = promisify(execFile);

function cliBlock(heading = '### First steps with the command line'): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(heading)[1];
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`README.md has no sh block under "${heading.replace(/^#+ /, '')}"`);
  return block;
}

describe('README, first steps with the command line', () => {
  let server: TestServer;
  beforeAll(async () => {
    assertBuilt();
    server = await startTestServer({ mustChangeAdminPassword: true });
  });
  afterAll(() => server?.close());

  it('works as written, from nothing to a published and found version', async () => {
    const block = cliBlock();
    expect(block).toContain('http://localhost:9090');
    // `npx repoadmin` in a checkout runs the package's own launcher: here, the built one.
    const npx = `npx() { if [ "$1" = repoadmin ]; then shift; node ${JSON.stringify(BIN)} "$@"; else return 127; fi; }\n`;
    const script = npx + block.replaceAll('http://localhost:9090', server.url);
    const home = await freshHome();
    const { stdout } = await exec('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env: cleanEnv({ HOME: home }) });
    // user add prints the new userId, publish the record's uid, search the version.
    expect(stdout.split('\n').filter(Boolean)).toEqual([expect.any(String), expect.any(String), '1.4.0']);
    expect(await server.db('users').where({ username: 'shop-ci' }).first()).toMatchObject({ project_name: 'shop', role: 'ROLE_USER' });
    expect(await server.db('users').where({ username: 'admin' }).first()).toMatchObject({ must_change_password: false });
    const row = await server.db('versions').where({ artifact_id: 'shop-api' }).first();
    expect(row).toMatchObject({ project_name: 'shop', branch: 'main', version: '1.4.0', latest_version: true });

    // Then the project token: made by the logged-in administrator, used by the pipeline's publish.
    const then = await exec('bash', ['-euo', 'pipefail', '-c', npx + cliBlock('### Then: a project token for the pipeline')], {
      cwd: ROOT,
      env: cleanEnv({ HOME: home }),
    });
    const lines = then.stdout.split('\n').filter(Boolean);
    expect(lines[0]).toEqual(expect.any(String)); // the new record's uid
    expect(lines.slice(1).join('\n')).toMatch(/\bci\b.*\bshop-ci\b|\bshop-ci\b.*\bci\b/);
    expect(then.stdout).not.toMatch(/rpa_/);
    const [shopCi] = await server.db('users').where({ username: 'shop-ci' }).select('id');
    expect(await server.db('tokens').where({ user_id: shopCi.id })).toEqual([expect.objectContaining({ name: 'ci', scope: 'publish' })]);
    const next = await server.db('versions').where({ artifact_id: 'shop-api', version: '1.4.1' }).first();
    expect(next).toMatchObject({ project_name: 'shop', branch: 'main', latest_version: true });
    expect(await server.db('versions').where({ artifact_id: 'shop-api', version: '1.4.0' }).first()).toMatchObject({ latest_version: false });
  });
});
