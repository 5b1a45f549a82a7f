// CLI start-up benchmark (not a test): wall time of `repoadmin --version`, `search --json` and
// `publish` against a local server, each run paired with a bare `node -e 0` in the same round so
// machine noise hits both; medians and ratios. Then what each package costs to import.
// Usage: npm run bench:cli [-- --runs 21]
import { spawn, spawnSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// A private copy of the build, so that a rebuild during the run cannot pull files away; inside
// node_modules so the server's external packages still resolve.
const COPY = join(ROOT, 'node_modules/.cache/repoadmin-bench-cli');
const BIN = join(COPY, 'bin/repoadmin');
const runsFlag = process.argv.indexOf('--runs');
const RUNS = Math.max(15, runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 21);
const ADMIN_PASSWORD = 'bench-admin-pass';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function timed(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return ms;
}

async function startServer(dataDir: string): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [BIN, 'server', '--port', '0', '--repoadmin_data_dir', dataDir], {
    env: { ...process.env, REPO_MAN_BCRYPT_COST: '4', REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD, REPO_MAN_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (chunk) => {
      text += chunk;
      const match = /listening on (http:\/\/[^\s,]+)/.exec(text);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`the server ended (${code}): ${text}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function api<T>(url: string, path: string, body: unknown, token?: string): Promise<T> {
  const response = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function main(): Promise<void> {
  await rm(COPY, { recursive: true, force: true });
  await cp(join(ROOT, 'dist'), join(COPY, 'dist'), { recursive: true });
  await cp(join(ROOT, 'bin/repoadmin'), BIN);
  const dataDir = await mkdtemp(join(tmpdir(), 'repoadmin-bench-cli-'));
  const home = await mkdtemp(join(tmpdir(), 'repoadmin-bench-home-'));
  const server = await startServer(dataDir);
  try {
    const admin = await api<{ token: string }>(server.url, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD });
    await api(server.url, '/v1/users', { username: 'bench', password: 'bench-pass-123', projectName: 'bench', role: 'ROLE_USER' }, admin.token);
    const user = await api<{ token: string }>(server.url, '/v1/authentication/generate-token', { username: 'bench', password: 'bench-pass-123' });
    const env = { PATH: process.env.PATH, HOME: home, REPOADMIN_URL: server.url, REPOADMIN_TOKEN: user.token, BRANCH_NAME: 'main' };
    for (let v = 0; v < 30; v++) await api(server.url, '/v1/repositories', { projectName: 'bench', branch: 'main', artifact: { groupId: 'com.bench', artifactId: 'app', version: `1.${v}.0` }, latestVersion: true }, user.token);

    const commands: Record<string, string[]> = {
      '--version': [BIN, '--version'],
      'search --json': [BIN, 'search', '--group', 'com.bench', '--artifact', 'app', '--branch', 'main', '--latest', '--json'],
      publish: [BIN, 'publish', '--group', 'com.bench', '--artifact', 'app', '--version', '2.0.0', '--latest'],
    };
    // Warm the file cache and the server before measuring.
    for (const args of Object.values(commands)) timed(args, env);

    const samples: Record<string, { cli: number[]; node: number[] }> = {};
    for (const name of Object.keys(commands)) samples[name] = { cli: [], node: [] };
    for (let round = 0; round < RUNS; round++) {
      for (const [name, args] of Object.entries(commands)) {
        // Alternate which goes first so neither always gets the warmer slot.
        if (round % 2) {
          samples[name]!.node.push(timed(['-e', '0'], env));
          samples[name]!.cli.push(timed(args, env));
        } else {
          samples[name]!.cli.push(timed(args, env));
          samples[name]!.node.push(timed(['-e', '0'], env));
        }
      }
    }

    console.log(`CLI start-up, ${RUNS} interleaved runs each, medians (Node ${process.version}, ${server.url})\n`);
    console.log('command            repoadmin   node -e 0   ratio   target');
    for (const [name, { cli, node }] of Object.entries(samples)) {
      const ratio = median(cli) / median(node);
      const target = name === '--version' ? '' : ratio <= 2.5 ? '<= 2.5x ok' : '> 2.5x MISSED';
      console.log(`${name.padEnd(18)} ${median(cli).toFixed(1).padStart(7)} ms ${median(node).toFixed(1).padStart(8)} ms ${ratio.toFixed(2).padStart(6)}x   ${target}`);
    }

    // What each package costs to import from node_modules (unbundled), over a bare start.
    const IMPORTS = ['commander', 'ky', 'chalk', 'cli-table3', 'conf', '@inquirer/prompts', 'zod', 'knex'];
    const importRuns = 7;
    const bare = median(Array.from({ length: importRuns }, () => timed(['--input-type=module', '-e', '0'], env)));
    console.log(`\nimport cost over a bare ESM start (${bare.toFixed(1)} ms), medians of ${importRuns}:`);
    for (const name of IMPORTS) {
      const ms = median(Array.from({ length: importRuns }, () => timed(['--input-type=module', '-e', `await import(${JSON.stringify(name)})`], env)));
      console.log(`  ${name.padEnd(20)} ${(ms - bare).toFixed(1).padStart(6)} ms`);
    }
    const fetchMs = median(Array.from({ length: importRuns }, () => timed(['--input-type=module', '-e', `await fetch(${JSON.stringify(`${server.url}/health`)})`], env)));
    console.log(`  ${'first fetch()'.padEnd(20)} ${(fetchMs - bare).toFixed(1).padStart(6)} ms (undici loads on first use)`);
  } finally {
    server.stop();
    await rm(home, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
    await rm(COPY, { recursive: true, force: true });
  }
}

await main();
