// The `fetch` ky calls, over node:http(s). ky still builds and hands over the standard Request and
// gets a standard Response back; what this leaves out is the rest of Node's built-in fetch: its
// connection pool, its WebAssembly HTTP parser (compiled on every process's first request) and the
// web-stream plumbing around each body, which together cost a pipeline step more CPU than
// everything else it does (see bench/cli.ts). Bodies here are small JSON documents, read whole.
import type { IncomingMessage, RequestOptions } from 'node:http';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** Statuses whose Response must not have a body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

interface Sent {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/** A fetch that follows redirects like the standard one (method, body and Authorization rules). */
export async function nodeFetch(input: Request | URL | string, init?: RequestInit): Promise<Response> {
  const request = input instanceof Request && !init?.signal ? input : new Request(input, init);
  const signal = request.signal;
  signal.throwIfAborted();
  const headers = Object.fromEntries(request.headers);
  headers['accept'] ??= '*/*';
  let sent: Sent = {
    method: request.method,
    url: new URL(request.url),
    headers,
    body: request.body ? Buffer.from(await request.arrayBuffer()) : undefined,
  };
  for (let redirects = 0; ; redirects++) {
    const response = await exchange(sent, signal);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode!) || location === undefined || request.redirect === 'manual') {
      return toResponse(response, await readBody(response), sent.url, redirects > 0);
    }
    response.resume();
    if (request.redirect === 'error') throw new TypeError('fetch failed', { cause: new Error(`redirected to ${location}`) });
    if (redirects === MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    sent = redirected(sent, response.statusCode!, new URL(location, sent.url));
  }
}

/** The next request of a redirect, as the Fetch standard has it. */
function redirected(previous: Sent, status: number, url: URL): Sent {
  const headers = { ...previous.headers };
  let { method, body } = previous;
  if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    method = 'GET';
    body = undefined;
    for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
  }
  if (url.origin !== previous.url.origin) {
    delete headers['authorization'];
    delete headers['cookie'];
  }
  return { method, url, headers, body };
}

async function exchange(sent: Sent, signal: AbortSignal): Promise<IncomingMessage> {
  const secure = sent.url.protocol === 'https:';
  if (!secure && sent.url.protocol !== 'http:') throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${sent.url.protocol}`) });
  // https (and with it TLS) is loaded only for an https address; getBuiltinModule rather than
  // import(), which the CLI's CommonJS bundle, run from its own code cache on Node 20, cannot do (bin/repoadmin).
  const { request } = secure ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
  const headers = sent.body ? { ...sent.headers, 'content-length': String(sent.body.length) } : sent.headers;
  const options: RequestOptions = { method: sent.method, headers, signal };
  return new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = request(sent.url, options, resolve);
    outgoing.on('error', (error) => reject(signal.aborted ? signal.reason : new TypeError('fetch failed', { cause: error })));
    outgoing.end(sent.body);
  });
}

async function readBody(response: IncomingMessage): Promise<Buffer> {
  const encoding = response.headers['content-encoding']?.trim().toLowerCase();
  let source: AsyncIterable<Buffer> = response;
  if (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate' || encoding === 'br') {
    const zlib = process.getBuiltinModule('node:zlib');
    const decoder = encoding === 'br' ? zlib.createBrotliDecompress() : encoding === 'deflate' ? zlib.createInflate() : zlib.createGunzip();
    source = response.pipe(decoder);
    response.on('error', (error) => decoder.destroy(error));
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of source) chunks.push(chunk);
  } catch (error) {
    throw new TypeError('terminated', { cause: error });
  }
  return Buffer.concat(chunks);
}

function toResponse(message: IncomingMessage, body: Buffer, url: URL, wasRedirected: boolean): Response {
  const headers = new Headers();
  const raw = message.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    // A body we decoded no longer has the encoding or length the server sent.
    const name = raw[i]!.toLowerCase();
    if (message.headers['content-encoding'] && (name === 'content-encoding' || name === 'content-length')) continue;
    headers.append(raw[i]!, raw[i + 1]!);
  }
  const status = message.statusCode!;
  const bytes = new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.length);
  const response = new Response(NULL_BODY.has(status) ? null : bytes, { status, statusText: message.statusMessage ?? '', headers });
  // A constructed Response has no address; error messages name it.
  Object.defineProperties(response, { url: { value: url.href }, redirected: { value: wasRedirected } });
  return response;
}
