// The documented first password is accepted only from loopback (a first start nobody else can take
// over), and REPO_MAN_HOST picks the address the server listens on. The server and its clients run
// in a network namespace the test makes (`unshare --net`), whose loopback also carries 192.0.2.1, an
// address that is not loopback: nothing outside this machine, nothing in its own namespace.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isLoopback } from '../../server/services/auth.js';
import { embeddedDataDir } from '../helpers/process.js';
import { namespaceSkip } from '../helpers/skip.js';

const OTHER = '192.0.2.1';
const module = (file: string) => JSON.stringify(new URL(file, import.meta.url).pathname);

function namespaceProblem(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces are Linux only';
  const probe = spawnSync('unshare', ['--net', '--', 'ip', 'addr', 'add', `${OTHER}/32`, 'dev', 'lo'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `cannot make a network namespace (unshare --net needs root): ${probe.stderr.trim()}`;
}
const unavailable = namespaceProblem();

interface Answer {
  from: string;
  status: number | string;
  message?: string;
}

/**
 * Starts a server with `args` in a new network namespace and logs in as admin with `password` from
 * each address in `from` (to the same address, or to 127.0.0.1 from loopback).
 */
async function loginsInNamespace(args: string[], password: string, from: string[]): Promise<Answer[]> {
  // A copy of the run's migrated embedded database, without users: the server's first start makes
  // the administrator, as on a new folder.
  const dataDir = embeddedDataDir();
  const script = `
    import http from 'node:http';
    const { loadConfig } = await import(${module('../../server/config.ts')});
    const { startServer } = await import(${module('../../server/start.ts')});
    const { createLogger } = await import(${module('../../server/log.ts')});
    const config = loadConfig(['--port', '0', '--repoadmin_data_dir', ${JSON.stringify(dataDir)}, '--repoadmin_bcrypt_cost', '4', ...${JSON.stringify(args)}], {});
    const server = await startServer(config, { log: createLogger('silent') });
    const login = (address) => new Promise((resolve) => {
      const body = JSON.stringify({ username: 'admin', password: ${JSON.stringify(password)} });
      const request = http.request({ host: address, localAddress: address, port: server.port, method: 'POST',
        path: '/v1/authentication/generate-token', headers: { 'content-type': 'application/json' } }, (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ from: address, status: response.statusCode, message: JSON.parse(text)._message?.message }));
      });
      request.on('error', (error) => resolve({ from: address, status: error.code }));
      request.end(body);
    });
    const answers = [];
    for (const address of ${JSON.stringify(from)}) answers.push(await login(address));
    await server.stop(0);
    process.stdout.write(JSON.stringify(answers));
  `;
  const shell = `ip link set lo up && ip addr add ${OTHER}/32 dev lo && exec "$@"`;
  const { stdout } = await promisify(execFile)(
    'unshare',
    ['--net', '--', 'sh', '-c', shell, 'sh', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 90_000 },
  );
  return JSON.parse(stdout) as Answer[];
}

describe('isLoopback', () => {
  it('knows loopback addresses in each form, and nothing else', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '::FFFF:127.0.0.2']) expect(isLoopback(address), address).toBe(true);
    for (const address of ['192.0.2.1', '::ffff:192.0.2.1', '10.0.0.1', '::', '0.0.0.0', 'fe80::1', '', 'localhost', '128.0.0.1']) {
      expect(isLoopback(address), address).toBe(false);
    }
  });
});

describe.skipIf(namespaceSkip('first login from another address', unavailable))('the documented first password over the network', { concurrent: true }, () => {
  it('is refused with 403 naming REPO_MAN_ADMIN_PASSWORD from another address, and accepted from loopback', async () => {
    const [other, loopback, otherAgain] = await loginsInNamespace([], 'password', [OTHER, '127.0.0.1', OTHER]);
    expect(other).toMatchObject({ from: OTHER, status: 403 });
    expect(other!.message).toContain('REPO_MAN_ADMIN_PASSWORD');
    expect(loopback).toMatchObject({ from: '127.0.0.1', status: 200 });
    // Still refused from there after a login from loopback: the password is unchanged.
    expect(otherAgain).toMatchObject({ from: OTHER, status: 403 });
  });

  it('does not touch a first password the operator chose', async () => {
    const answers = await loginsInNamespace(['--repoadmin_admin_password', 'an-operator-choice'], 'an-operator-choice', [OTHER, '127.0.0.1']);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
  });

  it('listens only on the address REPO_MAN_HOST names', async () => {
    const answers = await loginsInNamespace(['--repoadmin_host', '127.0.0.1'], 'password', [OTHER, '127.0.0.1']);
    expect(answers).toEqual([
      { from: OTHER, status: 'ECONNREFUSED' },
      { from: '127.0.0.1', status: 200, message: undefined },
    ]);
  });
});
