// What commands get from the outside world. Built lazily: a command pays only for what it uses.
import type { Api } from './api/client.js';
import type { ServerOptions } from './api/session.js';
import type { ConfigStore } from './config/store.js';
import type { Io } from '../common/io.js';

export type { Io } from '../common/io.js';

export interface Prompter {
  input(message: string, options?: { default?: string }): Promise<string>;
  password(message: string): Promise<string>;
  confirm(message: string, options?: { default?: boolean }): Promise<boolean>;
}

/** The global options (docs/cli.md, "Commands"), set by main() before a command runs. */
export interface Settings extends ServerOptions {
  json: boolean;
  /** false with --no-color; undefined leaves it to NO_COLOR, FORCE_COLOR and the terminal. */
  color?: boolean;
  quiet: boolean;
  verbose: boolean;
}

export const DEFAULT_SETTINGS: Settings = { json: false, quiet: false, verbose: false };

export interface Deps {
  io: Io;
  env: NodeJS.ProcessEnv;
  now: () => Date;
  /** Prompts on the terminal; only to be used when `canPrompt(deps)` holds. */
  prompter: Prompter;
  settings: Settings;
  /** The registry API at the server of `settings`, environment or config. Loaded on first call. */
  api: Api;
  /** Stored logins. Loaded on first call. */
  config: ConfigStore;
}

/** Prompts only when stdin and stdout are a terminal and CI is not set (docs/cli.md, "Interaction and output"). */
export function canPrompt(deps: Pick<Deps, 'io' | 'env'>): boolean {
  return deps.io.stdinIsTTY && deps.io.stdoutIsTTY && !deps.env.CI;
}

/** Why canPrompt said no, for the message: "no terminal to ask on", or CI on a terminal. */
export function noPromptReason(deps: Pick<Deps, 'io' | 'env'>): string {
  return deps.io.stdinIsTTY && deps.io.stdoutIsTTY ? 'CI is set, so nothing is asked' : 'no terminal to ask on';
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
    // Standard input is opened only by the commands that read it or may prompt.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    get stdinIsTTY() {
      return Boolean(process.stdin.isTTY);
    },
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
  };
}

function inquirerPrompter(io: Io): Prompter {
  const context = { input: io.stdin, output: io.stderr };
  return {
    async input(message, options) {
      const { input } = await import('./prompts.js');
      return input({ message, default: options?.default }, context);
    },
    async password(message) {
      const { password } = await import('./prompts.js');
      return password({ message, mask: '*' }, context);
    },
    async confirm(message, options) {
      const { confirm } = await import('./prompts.js');
      return confirm({ message, default: options?.default ?? false }, context);
    },
  };
}

/** Calls `load` once, on first use, and keeps its promise. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}

/**
 * The config store and the API client load their modules (conf, the HTTP client) on the first call
 * of a method, so --version, --help and the commands that do not use them never pay for them.
 */
function lazyConfig(load: () => Promise<ConfigStore>): ConfigStore {
  const store = once(load);
  return {
    path: async () => (await store()).path(),
    current: async () => (await store()).current(),
    get: async (url) => (await store()).get(url),
    save: async (login) => (await store()).save(login),
    complete: async (url, token, details) => (await store()).complete(url, token, details),
    remove: async (url) => (await store()).remove(url),
    position: async (url) => (await store()).position(url),
    keepPosition: async (url, position) => (await store()).keepPosition(url, position),
  };
}

/** Every method of the API, each loading the client on its first call (its list is the Api type's). */
function lazyApi(load: () => Promise<Api>): Api {
  const api = once(load);
  return new Proxy({} as Api, {
    // Not a promise: `then` (and any symbol) is no method of the API.
    get: (_target, method) =>
      typeof method !== 'string' || method === 'then'
        ? undefined
        : async (...args: unknown[]) => ((await api()) as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...args),
  });
}

export function createDeps(): Deps {
  const io = processIo();
  const env = process.env;
  const now = () => new Date();
  let prompter: Prompter | undefined;
  const settings: Settings = { ...DEFAULT_SETTINGS };
  const config = lazyConfig(async () => (await import('./config/store.js')).fileConfig(env));
  const api = lazyApi(async () =>
    (await import('./api/client.js')).createApi({
      settings,
      env,
      now,
      config,
      log: (line) => settings.verbose && io.err(`verbose: ${line}`),
    }),
  );
  return {
    io,
    env,
    now,
    get prompter() {
      prompter ??= inquirerPrompter(io);
      return prompter;
    },
    settings,
    api,
    config,
  };
}
