// One delivery attempt: a signed POST, 10 s at most, redirects not followed, connecting only to an
// address the rules allow (server/webhooks/addresses.ts).
import http from 'node:http';
import https from 'node:https';
import { VERSION } from '../../common/version.js';
import { type AddressRules, literalAddress } from './addresses.js';
import { signatureHeader } from './signature.js';

export const SEND_TIMEOUT_MS = 10_000;
/** What is read of an answer's body: enough to tell it ended, never kept. */
const ANSWER_LIMIT_BYTES = 64 * 1024;

export interface Attempt {
  /** The HTTP status, when an answer came. */
  status?: number;
  /** Why it did not count as delivered; undefined for a 2xx answer. */
  error?: string;
  durationMs: number;
  /** The receiver's Retry-After, in milliseconds. */
  retryAfterMs?: number;
}

export interface Message {
  url: string;
  /** The webhook-id: the same on every attempt. */
  id: string;
  body: string;
  secrets: string[];
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (!header) return undefined;
  if (/^\d{1,9}$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function send(message: Message, rules: AddressRules, timeoutMs = SEND_TIMEOUT_MS): Promise<Attempt> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(message.url);
  } catch {
    return Promise.resolve({ error: 'the webhook URL is not a URL', durationMs: 0 });
  }
  const literal = literalAddress(url);
  const refused = literal && rules.refusal(literal);
  if (refused) return Promise.resolve({ error: refused, durationMs: 0 });
  const timestamp = Math.floor(Date.now() / 1000);
  const request = (url.protocol === 'https:' ? https : http).request;
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    const finish = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(attempt);
    };
    const req = request(
      url,
      {
        method: 'POST',
        lookup: rules.lookup,
        // A connection per attempt: a kept-alive socket would skip the address check of the next.
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(message.body),
          'user-agent': `repoadmin/${VERSION}`,
          'webhook-id': message.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(message.secrets, message.id, timestamp, message.body),
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > ANSWER_LIMIT_BYTES) res.destroy();
        });
        const done = () =>
          finish({
            status,
            durationMs: took(),
            error: status >= 200 && status < 300 ? undefined : `the receiver answered ${status}`,
            retryAfterMs: retryAfterMs(res.headers['retry-after'], Date.now()),
          });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ error: `no answer within ${timeoutMs / 1000} s`, durationMs: took() });
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EREFUSEDADDRESS' ? error.message : `${error.code ?? 'error'}: ${error.message}`;
      finish({ error: reason.slice(0, 500), durationMs: took() });
    });
    req.end(message.body);
  });
}
