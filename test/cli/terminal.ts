// Drives the CLI in a real terminal (tmux): what a person sees and types.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { BIN } from './run.js';

const exec = promisify(execFile);

/**
 * Whether tmux is here. Without it the terminal tests are skipped, with this reason, unless
 * REPOADMIN_REQUIRE_TMUX=1 (CI) makes the missing tool a failure.
 */
export function tmuxMissing(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v tmux']).status === 0;
  if (found) return undefined;
  const reason = 'tmux is not installed (apt-get install -y tmux)';
  if (process.env.REPOADMIN_REQUIRE_TMUX === '1') throw new Error(`REPOADMIN_REQUIRE_TMUX=1 but ${reason}`);
  return reason;
}

export async function tmuxPath(): Promise<string> {
  try {
    return (await exec('sh', ['-c', 'command -v tmux'])).stdout.trim();
  } catch {
    throw new Error('these tests need tmux in a terminal: apt-get install -y tmux');
  }
}

export interface Terminal {
  /** The screen as text; with `escapes`, colour codes included. */
  screen(escapes?: boolean): Promise<string>;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Types text and presses Enter. */
  enter(text: string): Promise<void>;
  /** Presses one key as tmux names it, e.g. `C-c` for Ctrl-C. */
  press(key: string): Promise<void>;
  /** Waits for the command to end and returns its exit code. */
  exitCode(): Promise<number>;
  close(): Promise<void>;
}

let sessions = 0;

/** Runs `repoadmin <args>` in a new tmux session on a socket of its own. */
export async function inTerminal(args: string[], env: Record<string, string>): Promise<Terminal> {
  const tmux = await tmuxPath();
  const socket = `repoadmin-test-${process.pid}-${++sessions}`;
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const environment = Object.entries({ PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // The tmux server passes its own environment on to the session: only what the test gives, so
  // that the CI=true of a CI run does not reach a session that is meant to prompt.
  const server = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: env.HOME ?? process.env.HOME ?? '/tmp', TMPDIR: process.env.TMPDIR ?? '/tmp' };
  await exec(tmux, ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '200', '-y', '50', ...environment, `${quoted}; echo "[exit $?]"; sleep 600`], { env: server });
  const screen = async (escapes = false) => (await exec(tmux, ['-L', socket, 'capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', '0'])).stdout;
  const waitFor = async (pattern: RegExp, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = await screen();
      if (pattern.test(text)) return text;
      if (Date.now() > deadline) throw new Error(`the terminal never showed ${pattern}; it shows:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return {
    screen,
    waitFor,
    enter: async (text) => {
      if (text) await exec(tmux, ['-L', socket, 'send-keys', '-t', '0', '-l', text]);
      await exec(tmux, ['-L', socket, 'send-keys', '-t', '0', 'Enter']);
    },
    press: async (key) => {
      await exec(tmux, ['-L', socket, 'send-keys', '-t', '0', key]);
    },
    exitCode: async () => Number(/\[exit (\d+)\]/.exec(await waitFor(/\[exit \d+\]/))![1]),
    close: async () => {
      await exec(tmux, ['-L', socket, 'kill-server']).catch(() => undefined);
    },
  };
}
