// Fakes for driving run<Verb>(opts, deps) without a process: captured streams, a scripted prompter
// that fails on any prompt it was not told about, and an API whose answers each test provides.
import { PassThrough } from 'node:stream';
import type { Api, Credentials } from '../../cli/api/client.js';
import { memoryConfig } from '../../cli/config/store.js';
import { DEFAULT_SETTINGS, type Deps, type Io, type Prompter, type Settings } from '../../cli/deps.js';

export interface FakeIo extends Io {
  stdoutText(): string;
  stderrText(): string;
}

export function fakeIo(options: { tty?: boolean; stdin?: string } = {}): FakeIo {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (chunk) => out.push(String(chunk)));
  stderr.on('data', (chunk) => err.push(String(chunk)));
  const line = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);
  return {
    out: (text) => void out.push(line(text)),
    err: (text) => void err.push(line(text)),
    readStdin: async () => options.stdin ?? '',
    stdin: new PassThrough(),
    stdout,
    stderr,
    stdinIsTTY: Boolean(options.tty),
    stdoutIsTTY: Boolean(options.tty),
    stderrIsTTY: Boolean(options.tty),
    stdoutText: () => out.join(''),
    stderrText: () => err.join(''),
  };
}

export type Answer = { input: string } | { password: string } | { confirm: boolean };

/** Answers prompts in order; a prompt of another kind, or one too many, fails the test. */
export function scriptedPrompter(answers: Answer[]): Prompter & { asked: string[]; remaining(): number } {
  const queue = [...answers];
  const asked: string[] = [];
  const next = (kind: 'input' | 'password' | 'confirm', message: string) => {
    asked.push(message);
    const answer = queue.shift();
    if (!answer || !(kind in answer)) throw new Error(`unexpected ${kind} prompt: ${message}`);
    return answer;
  };
  return {
    asked,
    remaining: () => queue.length,
    input: async (message) => (next('input', message) as { input: string }).input,
    password: async (message) => (next('password', message) as { password: string }).password,
    confirm: async (message) => (next('confirm', message) as { confirm: boolean }).confirm,
  };
}

/** An API where every call the test did not provide fails, and each call is recorded. */
export function fakeApi(overrides: Partial<Api> = {}): Api & { calls: { name: string; args: unknown[] }[] } {
  const calls: { name: string; args: unknown[] }[] = [];
  return new Proxy({} as Api & { calls: typeof calls }, {
    get(_target, key: string) {
      if (key === 'calls') return calls;
      if (key === 'then') return undefined;
      return async (...args: unknown[]) => {
        calls.push({ name: key, args });
        const impl = (overrides as Record<string, ((...a: unknown[]) => unknown) | undefined>)[key];
        if (!impl) throw new Error(`unexpected API call: ${key}`);
        return impl(...args);
      };
    },
  });
}

export const SERVER = 'http://registry.test:9090';

export function credentials(overrides: Partial<Credentials> = {}): Credentials {
  return {
    token: 'header.payload.signature',
    source: 'config',
    username: 'admin',
    userId: '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd',
    expiresAt: '2030-01-01T00:00:00.000Z',
    ...overrides,
  };
}

export function fakeDeps(
  options: { tty?: boolean; stdin?: string; env?: NodeJS.ProcessEnv; api?: Api; prompter?: Prompter; settings?: Partial<Settings> } = {},
): Deps & { io: FakeIo; config: ReturnType<typeof memoryConfig> } {
  return {
    io: fakeIo(options),
    env: options.env ?? {},
    now: () => new Date('2026-11-21T10:00:00.000Z'),
    prompter: options.prompter ?? scriptedPrompter([]),
    settings: { ...DEFAULT_SETTINGS, ...options.settings },
    api: options.api ?? fakeApi(),
    config: memoryConfig(),
  };
}
