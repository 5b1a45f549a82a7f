// Reads a JSON request body: application/json only (415), at most 1 MiB (413), well-formed (400).
import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream';
import { AppError } from '../../common/errors.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Whether the request's headers announce a body. */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined && length !== '') return Number(length) > 0;
  return (req.headers['transfer-encoding'] ?? '') !== '';
}

/** Whether the request's Content-Type is JSON (any charset). */
export function isJson(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  return type !== undefined && type.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

const tooLarge = () => new AppError('payload_too_large', `the request body is larger than ${BODY_LIMIT_BYTES} bytes`);

/**
 * The body, read whole. A body that grows past the limit is still read to its end but thrown away,
 * as Node does with a body nobody reads: the 413 goes out at once and the connection stays usable
 * for the client's next request (the server's requestTimeout bounds how long that reading lasts).
 */
export function readBodyText(req: IncomingMessage): Promise<string> {
  if (Number(req.headers['content-length'] || 0) > BODY_LIMIT_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT_BYTES) {
        chunks.push(chunk);
        return;
      }
      // Without a listener the stream goes on flowing: the rest is read and dropped.
      req.off('data', onData);
      chunks.length = 0;
      reject(tooLarge());
    };
    req.on('data', onData);
    finished(req, (error) => {
      req.off('data', onData);
      if (!error) return resolve(Buffer.concat(chunks).toString('utf8'));
      // The client hung up (premature close, ECONNRESET) or the body timed out: its doing, not ours.
      // After a 413 this settles nothing.
      reject(new AppError('validation', 'the request body ended before it was complete', { errors: [{ path: '', message: 'incomplete body' }] }));
    });
  });
}

/**
 * The parsed JSON object of the request. With `optional`, a request without a body (and then
 * without Content-Type) reads as `{}`: a search needs neither.
 */
export async function readJson(req: IncomingMessage, options: { optional?: boolean } = {}): Promise<unknown> {
  const withBody = hasBody(req);
  if (options.optional && !withBody) return {};
  if (!withBody || !isJson(req)) {
    throw new AppError('unsupported_media_type', 'send the body as JSON with Content-Type: application/json');
  }
  return jsonObject(await readBodyText(req), options);
}

/** The JSON object in a body's text; with `optional`, an empty body reads as `{}`. */
export function jsonObject(text: string, options: { optional?: boolean } = {}): unknown {
  if (options.optional && text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError('validation', `malformed JSON body: ${(error as Error).message}`, {
      errors: [{ path: '', message: 'malformed JSON' }],
    });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('validation', 'the request body must be a JSON object', {
      errors: [{ path: '', message: 'must be a JSON object' }],
    });
  }
  return value;
}
