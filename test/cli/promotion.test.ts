// The built CLI against the real server: environments, promotion through their gates, vetoes,
// the history and the search by environment, with exit codes, stdout, stderr and what the server keeps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertBuilt, freshHome, run } from './run.js';

let server: TestServer;
let admin: string;
let shop: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer();
  admin = await server.adminToken();
  const created = await server.request('POST', '/v1/users', { token: admin, body: { username: 'ci-shop', password: 'shop-pass-123', projectName: 'shop', role: 'ROLE_USER' } });
  expect(created.status).toBe(201);
  const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'ci-shop', password: 'shop-pass-123' } });
  shop = login.body.token as string;
  home = await freshHome();
}, 240_000);

afterAll(async () => {
  await server?.close();
});

const as = (token: string) => ({ home, env: { REPOADMIN_URL: server.url, REPOADMIN_TOKEN: token } });

describe('environments and promotion from the command line', () => {
  it('sets environments, promotes through the gates, vetoes, and shows what runs where', async () => {
    const set = await run(['env', 'set', '--project', 'shop', 'dev', 'staging:requires=dev', 'prod:requires=staging,soak=60,protected'], as(admin));
    expect(set).toEqual({ code: 0, stdout: 'dev\t-\nstaging\trequires=dev\nprod\trequires=staging,soak=60,protected\n', stderr: 'Set 3 environments of shop.\n' });
    const stored = await server.request('GET', '/v1/projects/shop/environments', { token: admin });
    expect(stored.body.environments.map((e: { name: string }) => e.name)).toEqual(['dev', 'staging', 'prod']);

    // A mistake in the words is a usage error naming the word; nothing is sent.
    const bad = await run(['env', 'set', '--project', 'shop', 'dev', 'prod:requires=staging'], as(admin));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"prod:requires=staging": requires=staging names no earlier environment (earlier: dev)');

    for (const version of ['1.0.0', '1.1.0']) {
      expect((await run(['publish', '--group', 'com.acme', '--artifact', 'app', '--version', version, '--branch', 'main', '--latest'], as(shop))).code).toBe(0);
    }

    // requires: refused with the gate's words, exit 1.
    const early = await run(['promote', 'com.acme:app:1.0.0', '--to', 'staging'], as(shop));
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/^error: com\.acme:app:1\.0\.0 on shop main cannot go to staging: requires dev: /);

    const dev = await run(['promote', 'com.acme:app:1.0.0', '--to', 'dev', '--comment', 'first build'], as(shop));
    expect(dev).toMatchObject({ code: 0, stdout: '', stderr: 'Promoted com.acme:app:1.0.0 on shop main to dev (the first there).\n' });
    const again = await run(['promote', 'com.acme:app:1.0.0', '--to', 'dev', '--json'], as(shop));
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ environment: 'dev', promoted: false });
    expect(again.stderr).toBe('com.acme:app:1.0.0 on shop main is already current in dev: nothing recorded.\n');
    expect((await run(['promote', 'com.acme:app:1.0.0', '--to', 'staging', '--branch', 'main'], as(shop))).code).toBe(0);

    // protected: a project user may not (exit 4); soak: an administrator waits (exit 1, the gate's words).
    const protectedProd = await run(['promote', 'com.acme:app:1.0.0', '--to', 'prod'], as(shop));
    expect(protectedProd.code).toBe(4);
    const soak = await run(['promote', 'com.acme:app:1.0.0', '--to', 'prod', '--project', 'shop', '--branch', 'main'], as(admin));
    expect(soak.code).toBe(1);
    expect(soak.stderr).toMatch(/cannot go to prod: soak: \d+ of 60 minutes in staging/);

    // A vetoed version goes nowhere until the veto is lifted.
    const uid = (await run(['search', '--group', 'com.acme', '--artifact', 'app', '--version', '1.1.0', '--field', 'uid'], as(shop))).stdout.trim();
    const veto = await run(['veto', uid, '--reason', 'corrupts the cache'], as(shop));
    expect(veto).toMatchObject({ code: 0, stderr: `Vetoed com.acme:app:1.1.0: it cannot be promoted until repoadmin veto --lift ${uid}.\n` });
    expect((await server.request('GET', `/v1/repositories/${uid}`, { token: admin })).body.veto).toMatchObject({ reason: 'corrupts the cache', by: 'ci-shop' });
    const vetoed = await run(['promote', '--uid', uid, '--to', 'dev'], as(shop));
    expect(vetoed.code).toBe(1);
    expect(vetoed.stderr).toContain(`record ${uid} cannot go to dev: vetoed: corrupts the cache`);
    expect((await run(['veto', '--lift', uid], as(shop))).code).toBe(0);
    expect((await run(['promote', '--uid', uid, '--to', 'dev'], as(shop))).code).toBe(0);
    const back = await run(['promote', 'com.acme:app:1.0.0', '--to', 'dev', '--comment', 'roll back'], as(shop));
    expect(back.stderr).toBe(`Promoted com.acme:app:1.0.0 on shop main to dev (replacing ${uid}, a rollback).\n`);

    // What runs where, and how it got there.
    const list = await run(['env', 'list', '--project', 'shop'], as(shop));
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').map((line) => line.split('\t').slice(0, 4))).toEqual([
      ['dev', 'com.acme:app', '1.0.0', 'ci-shop'],
      ['staging', 'com.acme:app', '1.0.0', 'ci-shop'],
      ['prod', '-', '', ''],
      [''],
    ]);
    expect(list.stderr).toBe('staging: requires=dev\nprod: requires=staging,soak=60,protected\n');
    const history = await run(['promotions', '--env', 'dev', '--json'], as(shop));
    expect(history.code).toBe(0);
    expect(JSON.parse(history.stdout).promotions.map((p: { version: string; rollback: boolean; comment: string | null }) => [p.version, p.rollback, p.comment])).toEqual([
      ['1.0.0', true, 'roll back'],
      ['1.1.0', false, null],
      ['1.0.0', false, 'first build'],
    ]);

    // The search by environment: what is current there, and none is exit 3.
    expect(await run(['search', '--env', 'staging', '--field', 'version'], as(shop))).toEqual({ code: 0, stdout: '1.0.0\n', stderr: '' });
    const none = await run(['search', '--env', 'prod', '--latest', '--group', 'com.acme'], as(shop));
    expect(none.code).toBe(3);
    expect(none.stderr).toBe('error: nothing current in prod matches groupId com.acme\n');
    const missing = await run(['promote', 'com.acme:app:9.9.9', '--to', 'dev'], as(shop));
    expect(missing.code).toBe(3);
  }, 240_000);

  it('makes a token of the scope promote, which promotes but does not publish', async () => {
    const made = await run(['token', 'create', '--name', 'deploy', '--scope', 'promote'], as(shop));
    expect(made.code).toBe(0);
    const deploy = made.stdout.trim();
    expect(deploy).toMatch(/^rpa_/);
    const refused = await run(['publish', '--group', 'com.acme', '--artifact', 'app', '--version', '2.0.0', '--branch', 'main'], as(deploy));
    expect(refused.code).toBe(4);
    expect((await run(['publish', '--group', 'com.acme', '--artifact', 'lib', '--version', '2.0.0', '--branch', 'main'], as(shop))).code).toBe(0);
    const promoted = await run(['promote', 'com.acme:lib:2.0.0', '--to', 'dev', '--project', 'shop', '--branch', 'main'], as(deploy));
    expect(promoted).toMatchObject({ code: 0, stderr: 'Promoted com.acme:lib:2.0.0 on shop main to dev (the first there).\n' });
  }, 240_000);
});
