// The processes under load: the real server (the built binary) and the empty Koa app, each a child
// process on an ephemeral port, stopped by the benchmark however it ends.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LISTENING = /listening on http:\/\/localhost:(\d+)/;
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 20_000;
/** The one route of the empty Koa app. */
export const FLOOR_PATH = '/floor';

export interface Child {
  /** `http://127.0.0.1:PORT` */
  url: string;
  pid: number;
  /** Resident memory now, in bytes. */
  rss(): number;
  /** The last lines it wrote, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills what is still running: for the benchmark's own exit paths. */
export function killChildren(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Resident memory of a process in bytes; 0 once it is gone. */
export function rssOf(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return 0;
  }
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : 0;
}

function startChild(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): Promise<Child> {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not start within ${START_TIMEOUT_MS / 1000} s:\n${lines.join('\n')}`));
    }, START_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before listening:\n${lines.join('\n')}`));
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      keep(chunk);
      const port = LISTENING.exec(chunk.toString('utf8'))?.[1];
      if (!port) return;
      clearTimeout(timer);
      resolve({
        url: `http://127.0.0.1:${port}`,
        pid: child.pid!,
        rss: () => rssOf(child.pid!),
        output: () => lines.join('\n'),
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const force = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          child.kill('SIGTERM');
          await exited;
          clearTimeout(force);
        },
      });
    });
  });
}

/** A JSON POST to a server started here; its parsed answer, or an error naming the route and status. */
export async function call(server: Child, route: string, body: unknown, token?: string): Promise<unknown> {
  const response = await fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`POST ${route} failed: ${response.status} ${await response.text()}`);
  return response.json();
}

export interface ServerOptions {
  /** Server settings as REPO_MAN_* variables. */
  env: Record<string, string>;
  /** Write a CPU profile of the server into this folder (`node --cpu-prof`). */
  cpuProfileDir?: string;
  /** More arguments after `server --port 0`, e.g. `--workers 2`. */
  args?: string[];
  /** Options for node itself, before the script (e.g. `--require` of a probe). */
  nodeArgs?: string[];
  /** The checkout whose built server runs (default this one): another build, side by side (ab.ts). */
  root?: string;
}

/** The built server: `node bin/repoadmin server --port 0`. */
export function startServer(options: ServerOptions): Promise<Child> {
  const flags = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const env: NodeJS.ProcessEnv = { ...process.env, REPO_MAN_LOG_LEVEL: 'warn', ...options.env };
  return startChild([...flags, ...(options.nodeArgs ?? []), 'bin/repoadmin', 'server', '--port', '0', ...(options.args ?? [])], env, options.root);
}

/** The minimal `node:http` + `pg` server of minimal.ts. */
export function startMinimal(env: Record<string, string>, cpuProfileDir?: string): Promise<Child> {
  const flags = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [];
  return startChild([...flags, '--import', 'tsx', 'bench/minimal.ts'], { ...process.env, ...env });
}

/** The empty Koa app of floor.ts: the cost of HTTP and Koa alone. */
export function startFloor(): Promise<Child> {
  return startChild(['--import', 'tsx', 'bench/floor.ts'], process.env);
}

/** The webhook receiver of receiver.ts: answers 200 at once and notes each delivery's arrival. */
export function startReceiver(): Promise<Child> {
  return startChild(['--import', 'tsx', 'bench/receiver.ts'], process.env);
}

/** CPU time (user + system, ms) used so far by a process and its children (Linux; 0 elsewhere). */
export function cpuMsOf(pid: number): number {
  let total = 0;
  try {
    // Fields after the command name in parentheses: utime and stime are the 12th and 13th, in ticks of 10 ms.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    total += (Number(fields[11]) + Number(fields[12])) * 10;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const child of children ? children.split(' ') : []) total += cpuMsOf(Number(child));
  } catch {
    // Gone, or not Linux.
  }
  return total;
}
