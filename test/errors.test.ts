// The wire and the terminal have their own codes: the published contract lists only the wire codes,
// the exit codes are the command line's table over both, and the page reads statuses through the
// same table as the command line (docs/api.md "Errors", docs/cli.md "Exit codes").
import { describe, expect, it } from 'vitest';
import {
  AppError,
  EXIT_CODE,
  HTTP_STATUS,
  TERMINAL_ERROR_CODES,
  WIRE_ERROR_CODES,
  codeForStatus,
  isWireErrorCode,
} from '../common/errors.js';
import { ErrorBody } from '../common/schemas/errors.js';
import { errorBody, toAppError } from '../server/http/errors.js';
import { openApiDocument } from '../server/openapi.js';
import { API_ENDPOINTS } from '../server/routes/index.js';

describe('error codes', () => {
  it('the published error schema and the OpenAPI document list the wire codes only', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- reads deep paths of the generated document
    const schemas = (openApiDocument(API_ENDPOINTS) as { components: { schemas: Record<string, any> } }).components.schemas;
    expect(schemas.ErrorBody.properties._message.properties.code.enum).toEqual([...WIRE_ERROR_CODES]);
    for (const code of TERMINAL_ERROR_CODES) {
      expect(ErrorBody.safeParse({ _status: false, _message: { category: 'ERROR', code, message: 'x' } }).success).toBe(false);
    }
  });

  it('the two sets do not overlap, and every code has an exit code', () => {
    expect(TERMINAL_ERROR_CODES.filter((code) => isWireErrorCode(code))).toEqual([]);
    for (const code of [...WIRE_ERROR_CODES, ...TERMINAL_ERROR_CODES]) expect(EXIT_CODE[code]).toBeGreaterThan(0);
    expect(Object.keys(HTTP_STATUS).sort()).toEqual([...WIRE_ERROR_CODES].sort());
  });

  it('reads each wire status back as its code (409 is conflict), and unknown ones by class', () => {
    for (const code of WIRE_ERROR_CODES) expect(codeForStatus(HTTP_STATUS[code])).toBe(code);
    expect(codeForStatus(409)).toBe('conflict');
    expect(codeForStatus(502)).toBe('unavailable');
    expect(codeForStatus(504)).toBe('unavailable');
    expect(codeForStatus(501)).toBe('internal');
    expect(codeForStatus(418)).toBe('validation');
  });

  it('a terminal code that reaches the error middleware is answered as internal, never sent', () => {
    const error = toAppError(new AppError('usage', 'a start-up setting'));
    expect(error.code).toBe('internal');
    expect(error.status).toBe(500);
    expect(errorBody(error)._message).toEqual({ category: 'ERROR', code: 'internal', message: 'internal error: the server log has the details' });
  });

  it('the exit codes of docs/cli.md', () => {
    expect(EXIT_CODE).toEqual({
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
    });
  });
});
