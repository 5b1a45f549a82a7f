// The one error type of the project, and the tables that turn its code into an HTTP status
// (server) and a process exit code (CLI). Both sides import these tables; nothing else decides.

export const ERROR_CODES = [
  'validation',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal',
  'unavailable',
  // Client-side codes: never sent by the server.
  'usage',
  'nothing_found',
  'unreachable',
  'changes_pending',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** HTTP status of each code the server answers with. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  usage: 400,
  nothing_found: 404,
  unreachable: 503,
  changes_pending: 200,
};

/** Exit code of the CLI for each code (docs/cli.md, "Exit codes"). */
export const EXIT_CODE: Record<ErrorCode, number> = {
  validation: 1,
  unauthorized: 4,
  forbidden: 4,
  not_found: 3,
  method_not_allowed: 1,
  conflict: 1,
  payload_too_large: 1,
  unsupported_media_type: 1,
  rate_limited: 1,
  internal: 1,
  unavailable: 5,
  usage: 2,
  nothing_found: 3,
  unreachable: 5,
  changes_pending: 6,
};

/** One field-level problem of a validation error. */
export interface FieldError {
  path: string;
  message: string;
}

export interface AppErrorDetails {
  /** Field problems, only for `validation`. */
  errors?: FieldError[];
  /** Seconds until a `rate_limited` client may try again. */
  retryAfter?: number;
  /** Extra fields merged into the error body (the user routes' `valid` and `userId`). */
  body?: Record<string, unknown>;
  /** The underlying error, logged but never shown. */
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: AppErrorDetails;

  constructor(code: ErrorCode, message: string, details: AppErrorDetails = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return HTTP_STATUS[this.code];
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** The code for an HTTP status that arrived without a readable error body. */
export function codeForStatus(status: number): ErrorCode {
  const known = (Object.entries(HTTP_STATUS) as [ErrorCode, number][]).find(
    ([code, s]) => s === status && !CLIENT_ONLY.has(code),
  );
  if (known) return known[0];
  if (status === 502 || status === 504) return 'unavailable';
  if (status >= 500) return 'internal';
  return 'validation';
}

const CLIENT_ONLY = new Set<ErrorCode>(['usage', 'nothing_found', 'unreachable', 'changes_pending']);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}
