// A PostgreSQL primary and a streaming replica of it on this machine (initdb, pg_basebackup -R),
// for the read-replica tests: the replica really replays the primary's WAL, and its replay can be
// paused (pg_wal_replay_pause) to make it fall behind at will. Runs PostgreSQL as `postgres` through
// setpriv, so it needs root, like the Patroni topology (scripts/patroni.ts), whose check it shares.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { patroniProblem } from '../../scripts/patroni.js';
import { freePort } from './process.js';
import { skipping } from './skip.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';

/**
 * Why the tests on a real replica (and on the Patroni topology) cannot run here, or undefined.
 * REPOADMIN_REQUIRE_PATRONI=1 (set by .ci/run) makes a missing piece a failure instead of a skip.
 */
export function replicaSkip(what: string): boolean {
  const problem = patroniProblem() ?? (fs.existsSync(`${BIN}/initdb`) ? undefined : `PostgreSQL 15's binaries are not in ${BIN}`);
  if (problem && process.env.REPOADMIN_REQUIRE_PATRONI === '1') throw new Error(`REPOADMIN_REQUIRE_PATRONI=1 but ${problem}`);
  return skipping(what, problem);
}

export interface StreamingPair {
  primaryPort: number;
  replicaPort: number;
  /** The REPO_MAN_* settings of a server writing to the primary (at `primaryPort`, a proxy's, when given). */
  serverEnv(options?: { primaryPort?: number; maxLagMs?: number }): Record<string, string>;
  /** A statement on the replica (pause or resume its replay). */
  onReplica(sql: string): Promise<pg.QueryResult>;
  /** Stops the replica at once, as a crash would. */
  stopReplica(): Promise<void>;
  stop(): Promise<void>;
}

const asPostgres = (command: string, args: string[]) => run('setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', `${BIN}/${command}`, ...args]);

export async function startStreamingPair(): Promise<StreamingPair> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-replica-'));
  fs.chmodSync(dir, 0o755);
  await run('chown', ['postgres:postgres', dir]);
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  const primaryPort = await freePort();
  const replicaPort = await freePort();
  const settings = (port: number) =>
    `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nfsync = off\nmax_connections = 100\nhot_standby = on\n`;
  const started: string[] = [];
  const stopCluster = (data: string) => asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).then(() => undefined, () => undefined);
  let client: pg.Client | undefined;
  const stop = async () => {
    await client?.end().catch(() => {});
    for (const data of started) await stopCluster(data);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await asPostgres('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    fs.appendFileSync(path.join(primaryDir, 'postgresql.conf'), settings(primaryPort));
    started.push(primaryDir);
    await asPostgres('pg_ctl', ['-D', primaryDir, '-l', path.join(dir, 'primary.log'), '-w', 'start']);
    await asPostgres('psql', ['-X', '-h', dir, '-p', String(primaryPort), '-U', 'postgres', '-c', 'create database repoadmin']);
    await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '-c', 'fast']);
    fs.appendFileSync(path.join(replicaDir, 'postgresql.conf'), settings(replicaPort));
    started.push(replicaDir);
    await asPostgres('pg_ctl', ['-D', replicaDir, '-l', path.join(dir, 'replica.log'), '-w', 'start']);
    client = new pg.Client({ host: '127.0.0.1', port: replicaPort, user: 'postgres', database: 'repoadmin' });
    await client.connect();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    primaryPort,
    replicaPort,
    serverEnv: (options = {}) => ({
      REPO_MAN_DB_JDBC: 'postgres',
      REPO_MAN_DB_HOST: '127.0.0.1',
      REPO_MAN_DB_PORT: String(options.primaryPort ?? primaryPort),
      REPO_MAN_DB_USER: 'postgres',
      REPO_MAN_DB_PASS: '',
      REPO_MAN_DB_DATABASE: 'repoadmin',
      REPO_MAN_DB_READ_HOST: '127.0.0.1',
      REPO_MAN_DB_READ_PORT: String(replicaPort),
      ...(options.maxLagMs === undefined ? {} : { REPO_MAN_DB_READ_MAX_LAG_MS: String(options.maxLagMs) }),
    }),
    onReplica: (sql) => client!.query(sql),
    async stopReplica() {
      await client?.end().catch(() => {});
      client = undefined;
      await stopCluster(replicaDir);
    },
    stop,
  };
}
