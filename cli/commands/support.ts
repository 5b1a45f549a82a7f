// What every command file shares: attaching to the tree, printing a report, values from flags,
// the environment or a prompt, and confirmations.
import type { Command } from 'commander';
import type * as z from 'zod';
import { AppError, type FieldError } from '../../common/errors.js';
import { refusalOf, validationError } from '../../common/validation.js';
import { canPrompt, noPromptReason, type Deps } from '../deps.js';
import { printReport, type Report } from '../output/index.js';

/** Adds `child` under `parent` with the parent's output and error handling. */
export function attach(parent: Command, child: Command): Command {
  child.copyInheritedSettings(parent);
  child.helpOption('-h, --help', 'show help');
  parent.addCommand(child);
  return child;
}

/** The action of a command: parse, run, print; then the outcome of a report that is not a success. */
export function action<Flags, Options>(
  deps: Deps,
  parse: (flags: Flags, args: string[]) => Options,
  run: (options: Options, deps: Deps) => Promise<Report>,
): (...args: unknown[]) => Promise<void> {
  return async (...args) => {
    const command = args[args.length - 1] as Command;
    const flags = command.opts() as Flags;
    const operands = command.args;
    const report = await run(parse(flags, operands), deps);
    await printReport(report, deps);
    if (report.failure) throw report.failure;
  };
}

export function example(...lines: string[]): string {
  return `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}

/** A password from --password-stdin: all of stdin, without the final line break. */
export async function passwordFromStdin(deps: Pick<Deps, 'io'>): Promise<string> {
  const text = (await deps.io.readStdin()).replace(/\r?\n$/, '');
  if (!text) throw new AppError('usage', '--password-stdin: standard input was empty');
  return text;
}

interface Ask {
  /** The value given by a flag or variable, if any. */
  value: string | undefined;
  /** The prompt's question. */
  question: string;
  /** Names what supplies the value off a terminal, e.g. `--username or REPOADMIN_USERNAME`. */
  supply: string;
  default?: string;
}

/** The given value, else a prompt on a terminal, else a usage error naming what supplies it. */
export async function valueOrAsk(deps: Pick<Deps, 'io' | 'env' | 'prompter'>, ask: Ask): Promise<string> {
  if (ask.value) return ask.value;
  if (!canPrompt(deps)) throw new AppError('usage', `missing ${ask.supply} (${noPromptReason(deps)})`);
  const answer = (await deps.prompter.input(ask.question, { default: ask.default })).trim();
  if (!answer) throw new AppError('usage', `missing ${ask.supply}`);
  return answer;
}

/** A new password: from stdin with --password-stdin, else asked twice on a terminal. */
export async function newPassword(deps: Pick<Deps, 'io' | 'env' | 'prompter'>, fromStdin: boolean, whose: string): Promise<string> {
  if (fromStdin) return passwordFromStdin(deps);
  if (!canPrompt(deps)) throw new AppError('usage', `missing the password of ${whose}: pass it on standard input with --password-stdin`);
  const first = await deps.prompter.password(`New password for ${whose}:`);
  const again = await deps.prompter.password('Repeat it:');
  if (first !== again) throw new AppError('validation', 'the two passwords differ; nothing was changed');
  if (!first) throw new AppError('usage', 'the password must not be empty');
  return first;
}

/** Destructive commands ask on a terminal and need --yes elsewhere (docs/cli.md). */
export async function confirmed(deps: Pick<Deps, 'io' | 'env' | 'prompter'>, yes: boolean, question: string): Promise<boolean> {
  if (yes) return true;
  if (!canPrompt(deps)) throw new AppError('usage', `this cannot be undone: pass --yes to confirm (${noPromptReason(deps)})`);
  return deps.prompter.confirm(question, { default: false });
}

/** A whole number of at least `min`, from a flag. */
export function wholeNumber(value: string | undefined, flag: string, min = 1, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d{1,15}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new AppError('usage', `${flag} must be a whole number ${range}, not "${value}"`);
  }
  return n;
}

/** Names of the fields of a request by what the user typed: `artifact.version` -> `--version`. */
export type FieldLabels = Record<string, string>;

function rename(errors: FieldError[], labels: FieldLabels): FieldError[] {
  return errors.map((e) => ({ path: labels[e.path] ?? e.path, message: e.message }));
}

/**
 * Checks a request against the schema the server validates it with, before it is sent, so that a
 * problem names the flag (`--version: at most 100 characters`) rather than the API field.
 */
export function checkRequest(schema: z.ZodType, request: unknown, labels: FieldLabels): void {
  const result = schema.safeParse(request);
  if (result.success) return;
  throw validationError(rename(refusalOf(schema, request, result.error), labels));
}

/** The server's field errors (an older or stricter server) under the names the user typed. */
export function withFlagNames(error: unknown, labels: FieldLabels): unknown {
  if (!(error instanceof AppError) || error.code !== 'validation' || !error.details.errors?.length) return error;
  // The server's message joins its field errors as `path: message`: the same names change there.
  let message = error.message;
  for (const { path } of error.details.errors) {
    const label = labels[path];
    if (label) message = message.replaceAll(`${path}: `, `${label}: `);
  }
  return new AppError('validation', message, { ...error.details, errors: rename(error.details.errors, labels) });
}
