// The topology of docker-compose.ha.yml on this machine, from Debian's packages and the shipped
// configuration (deploy/patroni/): one etcd, three PostgreSQL nodes under Patroni, HAProxy with a
// primary port and a replicas port. The failover drill (bench/failover.ts) and its test
// (test/server/failover.test.ts) run on it. Needs root: Patroni runs as `postgres` (setpriv), since
// PostgreSQL refuses to run as root. Every process it starts and every folder it makes goes on stop().
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import YAML from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEPLOY = path.join(ROOT, 'deploy', 'patroni');
const HAPROXY = fs.existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy';
const SCOPE = 'repoadmin';
/** The login deploy/patroni/post-bootstrap.sh creates. */
export const DB_USER = 'repoadmin';
export const DB_PASSWORD = 'repoadmin-drill';

const run = promisify(execFile);

/** Whether this machine can build the topology: the packages, and root to run Patroni as postgres. */
export function patroniProblem(): string | undefined {
  for (const tool of ['patroni', 'patronictl', 'etcd', 'etcdctl']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (apt-get install --no-install-recommends patroni etcd-server etcd-client)`;
    }
  }
  if (!fs.existsSync(HAPROXY) && HAPROXY.startsWith('/')) return 'haproxy is not installed';
  if (process.getuid?.() !== 0) return 'building the Patroni topology needs root (Patroni runs as postgres through setpriv)';
  return undefined;
}

export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  config: string;
  /** Patroni itself; the postmaster it starts runs in a session of its own. */
  patroni?: ChildProcess;
}

export interface Member {
  Member: string;
  Role: string;
  State: string;
  /** Replication lag in MB, or "unknown"; absent on the leader. */
  'Lag in MB'?: number | string;
}

export interface Topology {
  dir: string;
  nodes: PatroniNode[];
  /** HAProxy's port to the primary, and to the replicas. */
  primaryPort: number;
  replicasPort: number;
  /** The REPO_MAN_* settings of a server that writes through the primary port (and reads through the replicas' with `reads`). */
  serverEnv(options?: { reads?: boolean }): Record<string, string>;
  members(): Promise<Member[]>;
  /** Waits until one leader runs and `replicas` members stream from it, one of them its synchronous standby. */
  waitHealthy(replicas: number, timeoutMs: number): Promise<void>;
  leader(): Promise<PatroniNode>;
  /** The primary's machine is lost: Patroni, the postmaster and its backends die at once (kill -9). */
  killNode(node: PatroniNode): void;
  /** kill -9 of the postmaster only: Patroni restarts it after crash recovery. */
  killPostmaster(node: PatroniNode): void;
  /** Starts a node's Patroni again (after killNode or stopNode): it rejoins as a replica. */
  startNode(node: PatroniNode): void;
  /** Stops a node's Patroni (and its PostgreSQL) as an operator would. */
  stopNode(node: PatroniNode, timeoutMs?: number): Promise<void>;
  /** A planned switchover to another member (patronictl). */
  switchover(): Promise<void>;
  /** A statement through psql as the superuser on a port (a node's, or HAProxy's), in `database` (postgres), its output. */
  psql(port: number, sql: string, database?: string): Promise<string>;
  /** Ends every process this topology started and removes its folder. */
  stop(): Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends a signal to a process group, if it still exists. */
function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Gone already.
  }
}

/** The postmaster's pid of a data folder, from postmaster.pid. */
function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
    return pid > 0 && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The process group of a pid (the postmaster's: the session Patroni started it in). */
function groupOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

/** The pids of processes whose command line names `dir` (what stop() must not leave behind). */
function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) pids.push(Number(entry));
    } catch {
      // Ended meanwhile.
    }
  }
  return pids.filter((pid) => pid !== process.pid);
}

async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** A node's configuration: deploy/patroni/patroni.yml with this machine's addresses and folders. */
function nodeConfig(template: string, node: PatroniNode, dir: string, etcdPort: number): string {
  const config = YAML.parse(template) as {
    name: string;
    restapi: unknown;
    etcd3: unknown;
    log?: unknown;
    bootstrap: { post_bootstrap: string };
    postgresql: Record<string, unknown> & { parameters: Record<string, unknown> };
  };
  const home = path.join(dir, node.name);
  config.name = node.name;
  config.restapi = { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` };
  config.etcd3 = { hosts: `127.0.0.1:${etcdPort}` };
  config.bootstrap.post_bootstrap = path.join(DEPLOY, 'post-bootstrap.sh');
  config.postgresql.listen = `127.0.0.1:${node.pgPort}`;
  config.postgresql.connect_address = `127.0.0.1:${node.pgPort}`;
  config.postgresql.data_dir = path.join(home, 'data');
  config.postgresql.pgpass = path.join(home, 'pgpass');
  config.postgresql.parameters = { ...config.postgresql.parameters, unix_socket_directories: home };
  config.log = { level: 'INFO' };
  return YAML.stringify(config);
}

/** deploy/patroni/haproxy.cfg with this machine's ports and nodes. */
function proxyConfig(template: string, nodes: PatroniNode[], primaryPort: number, replicasPort: number): string {
  const servers = nodes.map((n) => `    server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`).join('\n');
  return template
    .replace(/^ {4}bind :5000$/m, `    bind 127.0.0.1:${primaryPort}`)
    .replace(/^ {4}bind :5001$/m, `    bind 127.0.0.1:${replicasPort}`)
    .replace(/(^ {4}server pg\d .*\n?)+/gm, `${servers}\n`);
}

export async function startTopology(options: { port: () => Promise<number>; nodes?: number }): Promise<Topology> {
  const problem = patroniProblem();
  if (problem) throw new Error(problem);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-patroni-'));
  fs.chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  const port = options.port;
  const nodes: PatroniNode[] = [];
  for (let i = 1; i <= (options.nodes ?? 3); i++) {
    nodes.push({ name: `pg${i}`, pgPort: await port(), restPort: await port(), config: path.join(dir, `pg${i}.yml`) });
  }
  const etcdPort = await port();
  const etcdPeerPort = await port();
  const primaryPort = await port();
  const replicasPort = await port();
  const logFile = (name: string) => fs.openSync(path.join(dir, `${name}.log`), 'a');

  const startDetached = (command: string, args: string[], name: string, env: NodeJS.ProcessEnv = process.env) => {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', logFile(name), logFile(name)], env });
    child.unref();
    children.push(child);
    return child;
  };

  const etcd = `http://127.0.0.1:${etcdPort}`;
  const peer = `http://127.0.0.1:${etcdPeerPort}`;
  const stopAll = async () => {
    for (const node of nodes) {
      const pid = postmasterPid(path.join(dir, node.name, 'data'));
      const group = pid && groupOf(pid);
      if (group) killGroup(group, 'SIGKILL');
    }
    for (const child of children) if (child.pid) killGroup(child.pid, 'SIGKILL');
    await waitUntil('the topology stopped', () => processesIn(dir).length === 0 && children.every((c) => c.pid === undefined || !alive(c.pid)), 10_000, 100).catch(() => {
      for (const pid of processesIn(dir)) process.kill(pid, 'SIGKILL');
    });
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    startDetached(
      'etcd',
      [
        '--name', 'etcd', '--data-dir', path.join(dir, 'etcd'),
        '--listen-client-urls', etcd, '--advertise-client-urls', etcd,
        '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
        '--initial-cluster', `etcd=${peer}`, '--initial-cluster-state', 'new',
      ],
      'etcd',
    );
    await waitUntil(
      'etcd answering',
      () => run('etcdctl', [`--endpoints=127.0.0.1:${etcdPort}`, 'endpoint', 'health'], { env: { ...process.env, ETCDCTL_API: '3' } }).then(() => true, () => false),
      30_000,
    );

    const template = fs.readFileSync(path.join(DEPLOY, 'patroni.yml'), 'utf8');
    for (const node of nodes) {
      const home = path.join(dir, node.name);
      fs.mkdirSync(home, { mode: 0o700 });
      fs.writeFileSync(node.config, nodeConfig(template, node, dir, etcdPort));
      execFileSync('chown', ['-R', 'postgres:postgres', home, node.config]);
    }
    const patroniEnv = { ...process.env, REPOADMIN_DB_PASSWORD: DB_PASSWORD, HOME: dir };
    const startNode = (node: PatroniNode) => {
      node.patroni = startDetached('setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', 'patroni', node.config], node.name, patroniEnv);
    };
    for (const node of nodes) startNode(node);

    fs.writeFileSync(path.join(dir, 'haproxy.cfg'), proxyConfig(fs.readFileSync(path.join(DEPLOY, 'haproxy.cfg'), 'utf8'), nodes, primaryPort, replicasPort));
    startDetached(HAPROXY, ['-db', '-f', path.join(dir, 'haproxy.cfg')], 'haproxy');

    const members = async (): Promise<Member[]> => {
      const { stdout } = await run('patronictl', ['-c', nodes[0]!.config, 'list', '-f', 'json'], { env: patroniEnv });
      return JSON.parse(stdout) as Member[];
    };
    const nodeNamed = (name: string) => nodes.find((n) => n.name === name)!;

    const topology: Topology = {
      dir,
      nodes,
      primaryPort,
      replicasPort,
      serverEnv: ({ reads } = {}) => ({
        REPO_MAN_DB_JDBC: 'postgres',
        REPO_MAN_DB_HOST: '127.0.0.1',
        REPO_MAN_DB_PORT: String(primaryPort),
        REPO_MAN_DB_USER: DB_USER,
        REPO_MAN_DB_PASS: DB_PASSWORD,
        REPO_MAN_DB_DATABASE: 'repoadmin',
        ...(reads ? { REPO_MAN_DB_READ_HOST: '127.0.0.1', REPO_MAN_DB_READ_PORT: String(replicasPort) } : {}),
      }),
      members,
      async waitHealthy(replicas, timeoutMs) {
        let last: Member[] = [];
        await waitUntil(
          `one leader and ${replicas} streaming replicas`,
          async () => {
            last = await members().catch(() => []);
            const leaders = last.filter((m) => m.Role === 'Leader' && m.State === 'running');
            // Patroni 3.0 says "running" of a replica where later releases say "streaming"; a lag in MB means it replicates.
            const streaming = last.filter((m) => m.Role !== 'Leader' && (m.State === 'streaming' || m.State === 'running') && typeof m['Lag in MB'] === 'number');
            return leaders.length === 1 && streaming.length >= replicas && (replicas === 0 || streaming.some((m) => m.Role === 'Sync Standby'));
          },
          timeoutMs,
          500,
        ).catch((error: Error) => {
          throw new Error(`${error.message}: ${JSON.stringify(last)}`);
        });
        // HAProxy marks a node up after two good checks a second apart.
        await waitUntil('HAProxy routing to the primary', () => topology.psql(primaryPort, 'select 1').then(() => true, () => false), 10_000);
      },
      async leader() {
        const leader = (await members()).find((m) => m.Role === 'Leader');
        if (!leader) throw new Error('no leader');
        return nodeNamed(leader.Member);
      },
      killNode(node) {
        const pid = postmasterPid(path.join(dir, node.name, 'data'));
        const group = pid && groupOf(pid);
        if (node.patroni?.pid) killGroup(node.patroni.pid, 'SIGKILL');
        if (group) killGroup(group, 'SIGKILL');
      },
      killPostmaster(node) {
        const pid = postmasterPid(path.join(dir, node.name, 'data'));
        if (!pid) throw new Error(`${node.name} has no running postmaster`);
        process.kill(pid, 'SIGKILL');
      },
      startNode,
      async stopNode(node, timeoutMs = 30_000) {
        const child = node.patroni;
        if (!child?.pid || !alive(child.pid)) return;
        // setpriv execs patroni: the child's pid is Patroni's, which stops PostgreSQL on SIGTERM.
        process.kill(child.pid, 'SIGTERM');
        await waitUntil(`${node.name} stopped`, () => !alive(child.pid!) || child.exitCode !== null, timeoutMs, 100);
      },
      async switchover() {
        await run('patronictl', ['-c', nodes[0]!.config, 'switchover', '--force', SCOPE], { env: patroniEnv });
      },
      async psql(pgPort, sql, database = 'postgres') {
        const { stdout } = await run('psql', ['-X', '-At', '-h', '127.0.0.1', '-p', String(pgPort), '-U', 'postgres', '-d', database, '-c', sql], {
          env: { ...process.env, PGPASSWORD: 'postgres', PGCONNECT_TIMEOUT: '3' },
        });
        return stdout.trim();
      },
      stop: stopAll,
    };
    return topology;
  } catch (error) {
    await stopAll();
    throw error;
  }
}
