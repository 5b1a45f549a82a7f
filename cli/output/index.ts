// Output follows the terminal: tables with colour on a terminal, tab-separated rows when piped,
// the API's JSON with --json. Results go to stdout, messages for people to stderr.
import type { AppError } from '../../common/errors.js';
import type { Deps, Settings } from '../deps.js';
import { printable } from './printable.js';

export type Cell = string | number | boolean | null | undefined;

/** How a line is coloured on a terminal: what it adds, removes, changes, or what failed. */
export type Tone = 'added' | 'removed' | 'changed' | 'failed' | 'muted' | 'strong';

/** A line of output: plain text, or text with a tone that colours it on a terminal. */
export type Line = string | { text: string; tone: Tone };

/** What a command produced, for printReport to show in the form the run asks for. */
export interface Report {
  /** What --json prints: the API's answer, or the shape docs/cli.md gives for the command. */
  json: unknown;
  /** Rows: a table on a terminal, tab-separated text when piped. */
  table?: { head: string[]; rows: Cell[][] };
  /** With a table: what is printed instead of tab-separated rows when stdout is not a terminal. */
  plain?: string[];
  /** Lines, the same everywhere but for colour (e.g. `search --field version`); after a table. */
  lines?: Line[];
  /** For people, on stderr; --quiet silences them. */
  notes?: string[];
  /** On stderr even with --quiet: what a script must not miss (`jobs diff`: apply would refuse). */
  warnings?: string[];
  /** The outcome when it is not a success, raised once the report is printed (`jobs diff`: changes pending). */
  failure?: AppError;
}

/** --no-color, then FORCE_COLOR, then NO_COLOR, then whether the stream is a terminal. */
export function useColor(env: NodeJS.ProcessEnv, settings: Pick<Settings, 'color'>, isTTY: boolean): boolean {
  if (settings.color === false) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return isTTY;
}

function cellText(value: Cell): string {
  if (value === null || value === undefined) return '';
  return printable(String(value));
}

/** Tab-separated, one row per line; tabs and newlines inside a value become spaces. */
export function tsv(rows: Cell[][]): string[] {
  return rows.map((row) => row.map((cell) => cellText(cell).replace(/[\t\r\n]+/g, ' ')).join('\t'));
}

export async function renderTable(table: { head: string[]; rows: Cell[][] }, color: boolean): Promise<string> {
  const [{ default: Table }, { Chalk }] = await Promise.all([import('cli-table3'), import('chalk')]);
  const chalk = new Chalk({ level: color ? 1 : 0 });
  const t = new Table({
    head: table.head.map((h) => chalk.bold.cyan(h)),
    style: { head: [], border: [], compact: true, 'padding-left': 0, 'padding-right': 2 },
    chars: {
      top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '',
      'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '',
    },
  });
  for (const row of table.rows) t.push(row.map(cellText));
  return t.toString().replace(/ +$/gm, '');
}

const TONES: Record<Tone, (chalk: InstanceType<typeof import('chalk').Chalk>) => (text: string) => string> = {
  added: (chalk) => chalk.green,
  removed: (chalk) => chalk.red,
  changed: (chalk) => chalk.yellow,
  failed: (chalk) => chalk.bold.red,
  muted: (chalk) => chalk.dim,
  strong: (chalk) => chalk.bold,
};

/** Lines as text, each coloured by its tone when `color` holds. */
export async function renderLines(lines: Line[], color: boolean): Promise<string[]> {
  if (!color || lines.every((line) => typeof line === 'string')) return lines.map((line) => printable(typeof line === 'string' ? line : line.text));
  const { Chalk } = await import('chalk');
  const chalk = new Chalk({ level: 1 });
  return lines.map((line) => (typeof line === 'string' ? printable(line) : TONES[line.tone](chalk)(printable(line.text))));
}

export async function printReport(report: Report, deps: Pick<Deps, 'io' | 'env' | 'settings'>): Promise<void> {
  const { io, settings } = deps;
  if (settings.json) {
    if (report.json !== undefined) io.out(JSON.stringify(report.json, null, 2));
  } else {
    if (report.table && report.table.rows.length > 0) {
      if (io.stdoutIsTTY) io.out(await renderTable(report.table, useColor(deps.env, settings, true)));
      else for (const line of report.plain?.map(printable) ?? tsv(report.table.rows)) io.out(line);
    } else if (report.plain && !io.stdoutIsTTY) {
      for (const line of report.plain) io.out(printable(line));
    }
    const color = io.stdoutIsTTY && useColor(deps.env, settings, true);
    for (const line of await renderLines(report.lines ?? [], color)) io.out(line);
  }
  if (!settings.quiet) for (const note of report.notes ?? []) io.err(printable(note));
  for (const warning of report.warnings ?? []) io.err(printable(warning));
}
