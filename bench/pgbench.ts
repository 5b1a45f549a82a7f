// The database's own limit for a request's SQL: pgbench (PostgreSQL's C client) running the same
// statements from a custom script with prepared statements (-M prepared), at the same concurrency.
// The statements' `$n` parameters become pgbench variables given with -D, so they stay parameters.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Statement } from './scenarios.js';

export interface PgbenchResult {
  perSecond: number;
  /** Mean latency of one transaction (pgbench's "latency average"). */
  meanMs: number;
}

export interface PgbenchTarget {
  host: string;
  port: number;
  user: string;
  database: string;
}

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('pgbench', args, { env: { ...process.env, PGPASSWORD: process.env.PGPASSWORD ?? '' } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`pgbench failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/** One transaction of `statements`, run by `connections` clients for `seconds`; undefined when pgbench is missing. */
export async function pgbench(target: PgbenchTarget, statements: Statement[], connections: number, seconds: number): Promise<PgbenchResult | undefined> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'repoadmin-pgbench-'));
  try {
    const defines: string[] = [];
    const lines = statements.map((statement, s) => {
      const sql = statement.sql.replace(/\$(\d+)/g, (_, n: string) => `:p${s}_${n}`);
      statement.bindings.forEach((value, i) => defines.push('-D', `p${s}_${i + 1}=${String(value)}`));
      return `${sql};`;
    });
    const script = path.join(dir, 'script.sql');
    writeFileSync(script, `${lines.join('\n')}\n`);
    const output = await run([
      '-n', '-M', 'prepared', '-f', script, ...defines,
      '-c', String(connections), '-j', String(Math.min(connections, 2)), '-T', String(Math.max(1, Math.round(seconds))),
      '-h', target.host, '-p', String(target.port), '-U', target.user, target.database,
    ]).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || /ENOENT/.test(error.message)) return undefined;
      throw error;
    });
    if (output === undefined) return undefined;
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1];
    const latency = /latency average = ([\d.]+) ms/.exec(output)?.[1];
    if (!tps) throw new Error(`pgbench: no tps in its output:\n${output}`);
    return { perSecond: Number(tps), meanMs: Number(latency ?? NaN) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
