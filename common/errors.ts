// The one error type of the project, and the tables that turn its code into an HTTP status
// (server) and a process exit code (CLI). Both sides import these tables; nothing else decides.

/** The codes that travel over HTTP: a closed set, the contract (docs/api.md, "Errors"). */
export const WIRE_ERROR_CODES = [
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
] as const;

/** The command line's own codes: never sent by the server, never in the published error schema. */
export const TERMINAL_ERROR_CODES = [
  /** A flag, an argument or a setting that cannot be taken (also the server's start-up settings). */
  'usage',
  /** `search --latest` without a match. */
  'nothing_found',
  /** No answer, or an answer from something that is not the server asked for (ours or Jenkins). */
  'unreachable',
  /** `jobs diff`: changes are pending. */
  'changes_pending',
  /** The command did not do what was asked for a reason of its own (items refused, several matches, declined). */
  'failed',
] as const;

/**
 * Why a request was refused although its token was accepted, sent beside the code as `reason` so a
 * client can act on it (docs/api.md, "Errors"). `fresh_login_required`: making a project token
 * needs a session token issued in the last 15 minutes, or the caller's password (which was wrong,
 * if it was sent). `latest_record`, `immutable_version`, `current_in_environment`: a delete that
 * goes through only with force (the record is its key's latest, its version is immutable, or it is
 * the current version of an environment); each client names its own way of forcing it
 * (`?force=true`, `--force`).
 */
export const ERROR_REASONS = ['fresh_login_required', 'latest_record', 'immutable_version', 'current_in_environment'] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

export type WireErrorCode = (typeof WIRE_ERROR_CODES)[number];
export type TerminalErrorCode = (typeof TERMINAL_ERROR_CODES)[number];
export type ErrorCode = WireErrorCode | TerminalErrorCode;

/** HTTP status of each wire code. */
export const HTTP_STATUS: Record<WireErrorCode, number> = {
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
};

/** Exit code of the CLI for each wire code, then for its own codes (docs/cli.md, "Exit codes"). */
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
  failed: 1,
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
  /** Sent as the error body's `reason` (ERROR_REASONS). */
  reason?: ErrorReason;
  /** Extra fields merged into the error body (the user routes' `valid` and `userId`). */
  body?: Record<string, unknown>;
  /** The underlying error, logged but never shown. */
  cause?: unknown;
  /** What the audit entry of a refused request records (never a secret). */
  audit?: Record<string, unknown>;
  /** An `unavailable` caused by a service outside (an OpenID Connect issuer), not by the database. */
  upstream?: string;
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

  /** The HTTP status of a wire code; a terminal code never reaches a client (the server answers 500). */
  get status(): number {
    return isWireErrorCode(this.code) ? HTTP_STATUS[this.code] : HTTP_STATUS.internal;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** The wire code for an HTTP status that arrived without a readable error body. */
export function codeForStatus(status: number): WireErrorCode {
  const known = WIRE_ERROR_CODES.find((code) => HTTP_STATUS[code] === status);
  if (known) return known;
  if (status === 502 || status === 504) return 'unavailable';
  if (status >= 500) return 'internal';
  return 'validation';
}

export function isErrorReason(value: unknown): value is ErrorReason {
  return typeof value === 'string' && (ERROR_REASONS as readonly string[]).includes(value);
}

/** Whether the server refused for want of a fresh login (the token itself was accepted). */
export function needsFreshLogin(error: unknown): boolean {
  return isAppError(error) && error.details.reason === 'fresh_login_required';
}

export function isWireErrorCode(value: unknown): value is WireErrorCode {
  return typeof value === 'string' && (WIRE_ERROR_CODES as readonly string[]).includes(value);
}
