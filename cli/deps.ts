// What commands get from the outside world. Built lazily: a command pays only for what it uses.
import type { Readable, Writable } from 'node:stream';

export interface Io {
  /** Results: data for pipes and people. */
  out(text: string): void;
  /** Everything else: progress, warnings, confirmations. */
  err(text: string): void;
  /** All of standard input (for --password-stdin and friends). */
  readStdin(): Promise<string>;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
}

export interface Prompter {
  input(message: string, options?: { default?: string }): Promise<string>;
  password(message: string): Promise<string>;
  confirm(message: string, options?: { default?: boolean }): Promise<boolean>;
}

export interface Deps {
  io: Io;
  env: NodeJS.ProcessEnv;
  now: () => Date;
  /** Prompts on the terminal; only to be used when `canPrompt(deps)` holds. */
  prompter: Prompter;
}

/** Prompts only when stdin and stdout are a terminal and CI is not set (cli.md). */
export function canPrompt(deps: Pick<Deps, 'io' | 'env'>): boolean {
  return deps.io.stdinIsTTY && deps.io.stdoutIsTTY && !deps.env.CI;
}

function processIo(): Io {
  return {
    out: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => void process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
  };
}

function inquirerPrompter(io: Io): Prompter {
  const context = { input: io.stdin, output: io.stderr };
  return {
    async input(message, options) {
      const { input } = await import('@inquirer/prompts');
      return input({ message, default: options?.default }, context);
    },
    async password(message) {
      const { password } = await import('@inquirer/prompts');
      return password({ message, mask: '*' }, context);
    },
    async confirm(message, options) {
      const { confirm } = await import('@inquirer/prompts');
      return confirm({ message, default: options?.default ?? false }, context);
    },
  };
}

export function createDeps(): Deps {
  const io = processIo();
  let prompter: Prompter | undefined;
  return {
    io,
    env: process.env,
    now: () => new Date(),
    get prompter() {
      prompter ??= inquirerPrompter(io);
      return prompter;
    },
  };
}
