// Structured JSON log lines (pino) on stdout, or one readable line each when stdout is a terminal;
// never bodies, passwords or tokens.
import os from 'node:os';
import pino, { type DestinationStream, type Logger } from 'pino';

/** Which process wrote a line, among several instances and workers: host name and pid. */
export function instanceName(): string {
  return `${os.hostname()}:${process.pid}`;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { instance: instanceName() },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['req.headers.authorization', '*.password', '*.token'], censor: '[redacted]' },
      serializers: { err: loggedError },
    },
    destination ?? standardOutput(),
  );
}

/** The statement knex puts before the database's own message: "select … from users … - relation … does not exist". */
const QUOTED_STATEMENT = /^\s*(?:select|insert|update|delete|with|create|alter|drop|set|begin|commit|rollback|lock|call|show|truncate|do)\b[\s\S]*? - /i;

/** Where an error was thrown: its first frame outside dependencies and Node's own modules. */
function origin(stack: unknown): string | undefined {
  if (typeof stack !== 'string') return undefined;
  for (const line of stack.split('\n').slice(1)) {
    const frame = /\(?((?:file:\/\/)?\/[^()]+:\d+):\d+\)?$/.exec(line.trim());
    if (frame && !frame[1]!.includes('/node_modules/')) return frame[1]!.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
  }
  return undefined;
}

/**
 * An error as a log line shows it: its kind, code and message, and where it was thrown. Never its
 * stack, the SQL a database error quotes, nor a database error's detail, which quotes the values
 * of the row it refused ("Key (token_hash)=(...)"), as docs/operations.md ("Running the server") says.
 */
export function loggedError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const e = error as Error & { code?: unknown; errno?: unknown; sqlState?: unknown; sqlMessage?: unknown };
  const message = typeof e.sqlMessage === 'string' ? e.sqlMessage : e.message.replace(QUOTED_STATEMENT, '');
  const at = origin(e.stack);
  return {
    type: e.name,
    message,
    ...(e.code !== undefined ? { code: e.code } : {}),
    ...(e.errno !== undefined ? { errno: e.errno } : {}),
    ...(e.sqlState !== undefined ? { sqlState: e.sqlState } : {}),
    ...(at ? { at } : {}),
    ...(e.cause !== undefined ? { cause: loggedError(e.cause) } : {}),
  };
}

function standardOutput(): DestinationStream {
  if (!process.stdout.isTTY) return pino.destination({ fd: 1, sync: false });
  const color = !process.env.NO_COLOR && process.stdout.hasColors();
  return { write: (line: string) => process.stdout.write(formatLine(line, color)) };
}

const LEVELS: Record<number, { name: string; color: number }> = {
  10: { name: 'TRACE', color: 90 },
  20: { name: 'DEBUG', color: 90 },
  30: { name: 'INFO', color: 32 },
  40: { name: 'WARN', color: 33 },
  50: { name: 'ERROR', color: 31 },
  60: { name: 'FATAL', color: 35 },
};

function paint(text: string, code: number, color: boolean): string {
  return color ? `\u001b[${code}m${text}\u001b[39m` : text;
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * One pino JSON line as a line for people: `06:02:33.123 INFO  GET /v1/users 200 3.2 ms requestId=…`.
 * Lines that are not pino JSON pass unchanged.
 */
export function formatLine(line: string, color: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  if (entry === null || typeof entry !== 'object') return line.endsWith('\n') ? line : `${line}\n`;
  const { time, level, msg, err, ...fields } = entry;
  const shownLevel = LEVELS[level as number] ?? { name: String(level), color: 39 };
  const parts = [
    typeof time === 'string' ? (/T([\d:.]+)/.exec(time)?.[1] ?? time) : '',
    paint(shownLevel.name.padEnd(5), shownLevel.color, color),
  ].filter(Boolean);

  if (msg === 'request' && typeof fields.method === 'string' && typeof fields.status === 'number') {
    const { method, path, status, durationMs, ...others } = fields;
    const statusColor = status >= 500 ? 31 : status >= 400 ? 33 : 32;
    parts.push(String(method), String(path), paint(String(status), statusColor, color), `${String(durationMs)} ms`);
    for (const [k, v] of Object.entries(others)) parts.push(`${k}=${value(v)}`);
  } else {
    if (msg !== undefined) parts.push(String(msg));
    for (const [k, v] of Object.entries(fields)) parts.push(`${k}=${value(v)}`);
  }
  let text = parts.join(' ');
  const stack = (err as { stack?: unknown } | undefined)?.stack;
  if (typeof stack === 'string') text += `\n    ${stack.split('\n').join('\n    ')}`;
  else if (err !== undefined) text += ` err=${value(err)}`;
  return `${text}\n`;
}
