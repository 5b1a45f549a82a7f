// Output follows the terminal: tables with colour on a terminal, tab-separated rows when piped,
// the API's JSON with --json. Results go to stdout, messages for people to stderr.
import type { Deps, Settings } from '../deps.js';

export type Cell = string | number | boolean | null | undefined;

/** What a command produced, for printReport to show in the form the run asks for. */
export interface Report {
  /** What --json prints: the API's answer, or the shape docs/cli.md gives for the command. */
  json: unknown;
  /** Rows: a table on a terminal, tab-separated text when piped. */
  table?: { head: string[]; rows: Cell[][] };
  /** Plain lines, the same everywhere (e.g. `search --field version`). */
  lines?: string[];
  /** For people, on stderr; --quiet silences them. */
  notes?: string[];
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
  return String(value);
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

export async function printReport(report: Report, deps: Pick<Deps, 'io' | 'env' | 'settings'>): Promise<void> {
  const { io, settings } = deps;
  if (settings.json) {
    if (report.json !== undefined) io.out(JSON.stringify(report.json, null, 2));
  } else if (report.lines) {
    for (const line of report.lines) io.out(line);
  } else if (report.table && report.table.rows.length > 0) {
    if (io.stdoutIsTTY) io.out(await renderTable(report.table, useColor(deps.env, settings, true)));
    else for (const line of tsv(report.table.rows)) io.out(line);
  }
  if (!settings.quiet) for (const note of report.notes ?? []) io.err(note);
}
