// The keys of OpenID Connect issuers (docs/api.md, "Trusted publishing"): discovered from
// `{iss}/.well-known/openid-configuration` (whose `issuer` must be `iss`), its `jwks_uri` fetched and
// kept per Cache-Control between 5 minutes and 24 hours, fetched again for an unknown `kid` at most
// once per 30 s per issuer. The address rules of webhooks apply to both addresses (loopback,
// link-local, unspecified and multicast refused; https only), lifted for the networks of
// --repoadmin_oidc_allow_networks, where http is allowed too. Every key operation is jose's
// (createLocalJWKSet); this module only fetches and caches.
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { type JSONWebKeySet, createLocalJWKSet } from 'jose';
import { AppError } from '../../common/errors.js';
import { VERSION } from '../../common/version.js';
import { ISSUER_ADDRESSES, addressRules, inNetworks, literalAddress } from '../webhooks/addresses.js';

export const KEYS_MIN_MS = 5 * 60_000;
export const KEYS_MAX_MS = 24 * 3600_000;
/** An unknown `kid` makes the key set be fetched again at most this often per issuer. */
export const REFETCH_MIN_MS = 30_000;
/** How long the issuer has to answer each of its two documents. */
const FETCH_TIMEOUT_MS = 5_000;
const DOCUMENT_MAX_BYTES = 256 * 1024;
/** What a 503 caused by an issuer tells the client. */
export const ISSUER_RETRY_AFTER_SECONDS = 30;

export type KeyLookup = ReturnType<typeof createLocalJWKSet>;

interface CachedKeys {
  keys: KeyLookup;
  kids: Set<string>;
  expiresAt: number;
  fetchedAt: number;
}

/** Per issuer: its keys, and the fetch under way (concurrent exchanges share one). */
export interface IssuerKeyCache {
  entries: Map<string, CachedKeys>;
  inFlight: Map<string, Promise<CachedKeys>>;
  /** JWK Set fetches made, per issuer (the metrics and the tests read it). */
  fetches: Map<string, number>;
}

export function newKeyCache(): IssuerKeyCache {
  return { entries: new Map(), inFlight: new Map(), fetches: new Map() };
}

/** An issuer that is down, slow or answering garbage: 503 with Retry-After, never 500. */
export function issuerUnavailable(issuer: string, why: string): AppError {
  return new AppError('unavailable', `the OpenID Connect issuer ${issuer} cannot be used now (${why}): try again later`, {
    retryAfter: ISSUER_RETRY_AFTER_SECONDS,
    upstream: issuer,
  });
}

/** Why this issuer or key set address may not be used; undefined when it may. */
export async function addressRefusal(allowNetworks: string[], address: string): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return `${address} is not a URL`;
  }
  const literal = literalAddress(url);
  if (url.protocol === 'http:') {
    if (literal && inNetworks(allowNetworks, literal)) return undefined;
    if (!literal && allowNetworks.length > 0) return undefined; // checked on the address connected to (lookupFor)
    return `${address} is not https: http is allowed only on the networks ${ISSUER_ADDRESSES.setting} names`;
  }
  if (url.protocol !== 'https:') return `${address} is not an https URL`;
  if (literal) return addressRules(allowNetworks, ISSUER_ADDRESSES).refusal(literal);
  return undefined;
}

/** The lookup a fetch uses: the address rules, and for http only addresses in the allowed networks. */
function lookupFor(allowNetworks: string[], plainHttp: boolean): net.LookupFunction {
  const rules = addressRules(allowNetworks, ISSUER_ADDRESSES);
  if (!plainHttp) return rules.lookup;
  return (hostname, options, callback) => {
    rules.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const usable = (addresses as { address: string; family: number }[]).filter((a) => inNetworks(allowNetworks, a.address));
      if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} is not on a network where http is allowed`), { code: 'EREFUSEDADDRESS' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: unknown[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/** GETs a JSON document from the issuer: its body and Cache-Control. Fails as issuerUnavailable. */
export async function fetchJson(issuer: string, address: string, allowNetworks: string[]): Promise<{ body: unknown; cacheControl: string | undefined }> {
  const refused = await addressRefusal(allowNetworks, address);
  if (refused) throw new AppError('unauthorized', `the issuer's address may not be used: ${refused}`, { upstream: issuer });
  const url = new URL(address);
  const plainHttp = url.protocol === 'http:';
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      req.destroy();
      reject(issuerUnavailable(issuer, why));
    };
    const req = (plainHttp ? http : https).get(
      url,
      { lookup: lookupFor(allowNetworks, plainHttp), agent: false, headers: { accept: 'application/json', 'user-agent': `repoadmin/${VERSION}` } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > DOCUMENT_MAX_BYTES) fail(`${address} answered more than ${DOCUMENT_MAX_BYTES} bytes`);
          else chunks.push(chunk);
        });
        res.on('error', () => fail(`${address} broke off its answer`));
        res.on('end', () => {
          clearTimeout(timer);
          if (res.statusCode !== 200) return reject(issuerUnavailable(issuer, `${address} answered ${res.statusCode}`));
          try {
            const cacheControl = res.headers['cache-control'];
            resolve({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')), cacheControl });
          } catch {
            reject(issuerUnavailable(issuer, `${address} answered something that is not JSON`));
          }
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EREFUSEDADDRESS') {
        clearTimeout(timer);
        reject(new AppError('unauthorized', `the issuer's address may not be used: ${error.message}`, { upstream: issuer }));
      } else fail(`${address}: ${error.code ?? 'connection failed'}`);
    });
    const timer = setTimeout(() => fail(`${address} did not answer within ${FETCH_TIMEOUT_MS / 1000} s`), FETCH_TIMEOUT_MS);
  });
}

/** How long a key set is kept: its Cache-Control max-age (or s-maxage), between 5 minutes and 24 hours. */
export function keepFor(cacheControl: string | undefined): number {
  const m = /(?:^|,)\s*(?:s-maxage|max-age)\s*=\s*"?(\d+)"?/i.exec(cacheControl ?? '');
  const ms = m ? Number(m[1]) * 1000 : 0;
  return Math.min(KEYS_MAX_MS, Math.max(KEYS_MIN_MS, ms));
}

/** A JWK Set's shape, enough to hand it to jose; anything else is the issuer answering garbage. */
function asKeySet(issuer: string, body: unknown): JSONWebKeySet {
  const keys = (body as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'object' || k === null || Array.isArray(k))) {
    throw issuerUnavailable(issuer, 'its jwks_uri answered no JWK Set');
  }
  return body as JSONWebKeySet;
}

/** The key lookup of a JWK Set given with a publisher (no discovery). */
export function localKeys(sets: JSONWebKeySet[]): { keys: KeyLookup; kids: Set<string> } {
  const all = { keys: sets.flatMap((s) => s.keys) };
  return { keys: createLocalJWKSet(all), kids: new Set(all.keys.map((k) => String(k.kid ?? ''))) };
}

async function discover(cache: IssuerKeyCache, issuer: string, allowNetworks: string[], now: number): Promise<CachedKeys> {
  const { body: configuration } = await fetchJson(issuer, `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, allowNetworks);
  const document = configuration as { issuer?: unknown; jwks_uri?: unknown } | null;
  if (typeof document !== 'object' || document === null || typeof document.jwks_uri !== 'string') {
    throw issuerUnavailable(issuer, 'its openid-configuration names no jwks_uri');
  }
  if (document.issuer !== issuer) {
    throw new AppError('unauthorized', `the issuer's openid-configuration names the issuer ${JSON.stringify(document.issuer)}, not ${issuer}: its keys are not used`);
  }
  cache.fetches.set(issuer, (cache.fetches.get(issuer) ?? 0) + 1);
  const { body, cacheControl } = await fetchJson(issuer, document.jwks_uri, allowNetworks);
  const set = asKeySet(issuer, body);
  let keys: KeyLookup;
  try {
    keys = createLocalJWKSet(set);
  } catch {
    throw issuerUnavailable(issuer, 'its jwks_uri answered no usable JWK Set');
  }
  const entry = { keys, kids: new Set(set.keys.map((k) => String(k.kid ?? ''))), expiresAt: now + keepFor(cacheControl), fetchedAt: now };
  cache.entries.set(issuer, entry);
  return entry;
}

/**
 * The issuer's keys: from the cache while they are fresh; fetched again when they are stale, or when
 * `kid` is not among them and the last fetch is 30 s old or more. Concurrent callers share one fetch.
 */
export async function issuerKeys(cache: IssuerKeyCache, issuer: string, kid: string | undefined, allowNetworks: string[], now: number): Promise<{ keys: KeyLookup; kids: Set<string> }> {
  const cached = cache.entries.get(issuer);
  const fresh = cached && cached.expiresAt > now;
  const unknownKid = cached && kid !== undefined && !cached.kids.has(kid);
  if (cached && fresh && !(unknownKid && now - cached.fetchedAt >= REFETCH_MIN_MS)) return cached;
  let pending = cache.inFlight.get(issuer);
  if (!pending) {
    pending = discover(cache, issuer, allowNetworks, now).finally(() => cache.inFlight.delete(issuer));
    cache.inFlight.set(issuer, pending);
  }
  return pending;
}
