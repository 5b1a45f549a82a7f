// One delivery attempt: a signed POST, 10 s at most, redirects not followed, connecting only to an
// address the rules allow (server/webhooks/addresses.ts). The sender reuses connections through
// keepAliveAgents; a single attempt (a ping) opens a connection of its own.
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

/** The agents of one sender: kept-alive connections, each opened through the address rules. */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
  /** Closes the idle connections; those in use close when their attempt ends. */
  destroy(): void;
}

/** How long an idle connection is kept: under the 5 s that Node servers (and many others) keep one. */
const IDLE_MS = 4_000;

/**
 * Agents that keep connections open between attempts. Every NEW connection is made with the rules'
 * `lookup` (set on the agent, so that no request can leave it out), so it is checked on the address it
 * actually connects to, as with a connection per attempt; a reused connection is one to an address
 * that was checked when it was opened, and a name that re-resolves to a refused address meanwhile
 * is refused on the next new connection. Connections are pooled per host, port and scheme, so
 * a reused one is always to the host the URL names.
 */
export function keepAliveAgents(rules: AddressRules): Agents {
  const options = { keepAlive: true, timeout: IDLE_MS, scheduling: 'lifo' as const, lookup: rules.lookup };
  const agents = { http: new http.Agent(options), https: new https.Agent(options) };
  return { ...agents, destroy: () => { agents.http.destroy(); agents.https.destroy(); } };
}

export function send(message: Message, rules: AddressRules, timeoutMs = SEND_TIMEOUT_MS, agents?: Agents): Promise<Attempt> {
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
  const secure = url.protocol === 'https:';
  const request = (secure ? https : http).request;
  type Outcome = Attempt & { retryOnNewConnection?: boolean };
  const attemptOnce = (agent: http.Agent | false): Promise<Outcome> => new Promise((resolve) => {
    let settled = false;
    const finish = (attempt: Outcome) => {
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
        // Without agents a connection of its own; with them a kept-alive one (keepAliveAgents).
        agent,
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
    }, Math.max(0, started + timeoutMs - performance.now()));
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EREFUSEDADDRESS' ? error.message : `${error.code ?? 'error'}: ${error.message}`;
      // A kept-alive connection the receiver closed just as it was reused: nothing was answered on it.
      const stale = req.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      finish({ error: reason.slice(0, 500), durationMs: took(), retryOnNewConnection: stale || undefined });
    });
    req.end(message.body);
  });
  const agent = agents ? (secure ? agents.https : agents.http) : false;
  return attemptOnce(agent).then(({ retryOnNewConnection, ...attempt }) =>
    // Once more at once on a new connection (still through the rules' lookup): the same attempt.
    retryOnNewConnection ? attemptOnce(false).then(({ retryOnNewConnection: _, ...again }) => again) : attempt,
  );
}
