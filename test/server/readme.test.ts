// The curl block of docs/api.md, "First steps with curl", run as written against a live server on its first start.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { ROOT } from '../helpers/process.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const exec = promisify(execFile);

function curlBlock(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8');
  const section = readme.split('## First steps with curl')[1];
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('docs/api.md has no sh block under "First steps with curl"');
  return block;
}

describe.each(dbKinds())('README on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ kind, mustChangeAdminPassword: true });
  });
  afterAll(() => server?.close());

  it('its curl block works as written', async () => {
    const { stdout } = await exec('bash', ['-euo', 'pipefail', '-c', curlBlock()], { env: { ...process.env, BASE: server.url } });
    const lines = stdout.trim().split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ userId: expect.any(String), valid: true });
    expect(JSON.parse(lines[1]!)).toEqual({ _status: true, uid: expect.any(String), created: true });
    const search = JSON.parse(lines[2]!);
    expect(search.versionInformation).toHaveLength(1);
    expect(search.versionInformation[0]).toMatchObject({
      projectName: 'shop',
      branch: 'main',
      version: '1.4.0',
      creationDate: '2019-03-02T20:30:35.420+0000',
      latestVersion: true,
    });
    expect(search.page).toEqual({ totalElements: 1, totalPages: 1, currentPage: 1, numberOfElements: 1 });
    const stored = await server.db('users').where({ username: 'shop-ci' }).first();
    expect(stored.project_name).toBe('shop');
  });
});
