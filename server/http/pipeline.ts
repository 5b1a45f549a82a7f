// The one pipeline every declared endpoint runs through, straight on node:http. At start each
// declaration (server/http/endpoint.ts) is compiled once into a route: its matcher, access check,
// parsers and labels. A request then runs a flat sequence: request id, route, access, input,
// handler, answer, audit, count, log line. What is not an endpoint (the page, `/`) goes to Koa.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { AppError, isAppError } from '../../common/errors.js';
import type { AuditEntry, AuditVia } from '../db/audit.js';
import type { Outages } from '../db/outage.js';
import type { Actor, Services, SignedCredential } from '../services/context.js';
import { type TokenRule, checkActor, decideOwner } from '../policy/access.js';
import { actorOf, clientAddress, signedCredential } from './auth.js';
import { readJson } from './body.js';
import type { Answer, Endpoint, EndpointRequest, Method, Subject } from './endpoint.js';
import { failureAnswer } from './errors.js';
import { UNMATCHED_ROUTE, countRequest, logRequest, requestIdFrom } from './observe.js';
import { type HandlerRun, handlerRun } from './reads.js';
import { parse, parseQuery } from './validate.js';

/** Answers the request and returns true, or returns false having touched nothing (Koa's then). */
export type Pipeline = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Every answer carries these (docs/api.md, "Headers"). */
export const SECURITY_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' } as const;

interface Route {
  endpoint: Endpoint;
  method: Method;
  /** The metrics label: the path in the router's form, with `:uid` for the parameter `{uid}`. */
  label: string;
  /** The path's segments; a parameter's is its name with a leading ':'. */
  segments: string[];
  /** Resolves the caller from its token (a 401 for one that is not valid); at once where no token is read. */
  access: (req: IncomingMessage) => Caller | Promise<Caller>;
  /**
   * Throws the 401/403 the caller gets under the endpoint's rule. Apart from `access`, so that a
   * refused request's audit entry still names who was refused.
   */
  check?: (caller: Caller, params: Record<string, string>) => void;
  /** The rule of what the request names (access.owner), applied to the handler's request before it runs. */
  decide?: (request: HandlerRequest, params: Record<string, string>) => Promise<void>;
  /** Answers that need a token are not stored by caches. */
  private: boolean;
  /** Where the handler checks the credential: the user it names, to say what is wrong with it first. */
  verify?: (req: IncomingMessage) => Promise<Actor | undefined>;
  /** Runs the handler on the database chosen for the request (server/http/reads.ts). */
  run: HandlerRun;
}

interface Caller {
  actor?: Actor;
  credential?: SignedCredential;
}

const NOBODY: Caller = Object.freeze({});

const NO_SUBJECT: Subject = Object.freeze({});

/**
 * What a handler is given, made once per request with each field set by name. (Made by spreading the
 * parsed input into a new object, it cost every request's objects a promotion to the old generation:
 * V8 kept them through minor collections until the next full one, which took a fifth of the CPU
 * of a latest lookup; docs/benchmarks.md.)
 */
class HandlerRequest implements EndpointRequest<unknown, unknown, unknown> {
  #controller: AbortController | undefined;
  #answered = false;
  subject: Subject = NO_SUBJECT;
  allowed: string | undefined = undefined;

  constructor(
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    readonly actor: Actor | undefined,
    readonly credential: SignedCredential | undefined,
    readonly requestId: string,
    readonly address: string,
    readonly headers: IncomingHttpHeaders,
    private readonly res: ServerResponse,
    private readonly endpoint: Endpoint,
  ) {}

  auditEntry(): AuditEntry {
    const audit = this.endpoint.audit;
    if (!audit) throw new Error(`${this.endpoint.method} ${this.endpoint.path} is not declared with audit`);
    return { via: viaOf(audit, this.actor, this.credential), action: audit.action, target: audit.target?.(this), outcome: 'ok', address: this.address, requestId: this.requestId };
  }

  /**
   * Aborted when the connection closes before the answer went out, and once it has. Made on first
   * use: most handlers never ask for it, and an AbortController with its listener on every request
   * cost more than the route match.
   */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#answered || this.res.closed) this.#controller.abort();
      else this.res.once('close', this.#abort);
    }
    return this.#controller.signal;
  }

  /** The handler has answered: the connection's closing no longer concerns it. */
  answered(): void {
    this.#answered = true;
    if (!this.#controller) return;
    this.res.off('close', this.#abort);
    this.#controller.abort();
  }

  readonly #abort = () => this.#controller!.abort();
}

interface Match {
  route?: Route;
  params: Record<string, string>;
  /** The methods the path has, when no route of this method matched (405). */
  allowed?: string[];
}

export function createPipeline(endpoints: readonly Endpoint[], services: Services, outages: Outages): Pipeline {
  const routes = endpoints.filter((e) => !e.enabled || e.enabled(services)).map((e) => compile(e, services));
  const byPath = new Map<string, Route[]>();
  const withParams: Route[] = [];
  for (const route of routes) {
    if (route.segments.some((s) => s.startsWith(':'))) withParams.push(route);
    else byPath.set(route.segments.join('/'), [...(byPath.get(route.segments.join('/')) ?? []), route]);
  }
  // A trailing slash is the same path, as is another letter case of its fixed parts.
  const trimmed = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
  const ownsPath = (path: string) => {
    const lower = trimmed(path).toLowerCase();
    return lower.startsWith('/v1/') || byPath.has(lower);
  };

  const match = (method: string, path: string): Match | undefined => {
    let candidates = byPath.get(trimmed(path).toLowerCase());
    let params: Record<string, string> = {};
    if (!candidates) {
      const given = trimmed(path).split('/');
      for (const route of withParams) {
        const found = paramsOf(route.segments, given);
        if (!found) continue;
        if (!candidates) {
          candidates = [];
          params = found;
        }
        candidates.push(route);
      }
    }
    if (!candidates) return undefined;
    const wanted = method === 'HEAD' ? 'GET' : method;
    const route = candidates.find((r) => r.method === wanted);
    if (route) return { route, params };
    return { params, allowed: candidates.flatMap((r) => (r.method === 'GET' ? ['HEAD', 'GET'] : [r.method])) };
  };

  return (req, res) => {
    const target = req.url ?? '/';
    const hash = target.indexOf('#');
    const url = hash < 0 ? target : target.slice(0, hash);
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    if (!ownsPath(path)) return false;
    const search = mark < 0 ? '' : url.slice(mark + 1);
    serve(services, outages, req, res, path, search, match(req.method ?? 'GET', path)).catch((error: unknown) => {
      // What failed while answering a failure (counting or logging it): logged, and the connection
      // ended if no answer went out, rather than an unhandled rejection ending the server.
      services.log.error({ err: error }, 'request failed');
      if (!res.headersSent) res.destroy();
    });
    return true;
  };
}

/** The parameters of a path that fits a route's segments (decoded; a bad escape stays as sent). */
function paramsOf(segments: string[], given: string[]): Record<string, string> | undefined {
  if (segments.length !== given.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const want = segments[i]!;
    const part = given[i]!;
    if (want.startsWith(':')) {
      if (part === '') return undefined;
      params[want.slice(1)] = decode(part);
    } else if (want !== part.toLowerCase()) return undefined;
  }
  return params;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function compile(endpoint: Endpoint, services: Services): Route {
  const run = handlerRun(endpoint, services);
  const segments = endpoint.path.split('/').map((s) => (s.startsWith('{') ? `:${s.slice(1, -1)}` : s.toLowerCase()));
  const label = endpoint.path.replace(/\{(\w+)\}/g, ':$1');
  const access = endpoint.access;
  if (access === 'public') return { endpoint, method: endpoint.method, label, segments, run, access: () => NOBODY, private: false };
  if (access === 'reader') {
    const reader = (actor: Actor | undefined): Caller => {
      if (!actor && !services.config.searchPublic) throw new AppError('unauthorized', 'this server requires a bearer token for searching');
      return actor ? { actor } : NOBODY;
    };
    return {
      endpoint,
      method: endpoint.method,
      label,
      segments,
      run,
      private: !services.config.searchPublic,
      access: (req) => {
        const authorization = req.headers.authorization;
        // Without a token, at once: most reads of a public server send none.
        if (authorization !== undefined && authorization !== '') return actorOf(services, authorization).then(reader);
        return reader(undefined);
      },
    };
  }
  const rule = (params: Record<string, string>): TokenRule => ({
    role: access.role,
    scope: access.scope,
    purpose: access.purpose,
    mustChangeAllowed: access.allowWhileMustChange && ((actor) => access.allowWhileMustChange!({ params }, actor)),
  });
  const identify = (req: IncomingMessage) => actorOf(services, req.headers.authorization);
  const resolve = async (req: IncomingMessage) => ({ actor: await identify(req) });
  // A signed credential left to the handler is checked by the handler's statement.
  const check = (caller: Caller, params: Record<string, string>) => {
    if (!caller.credential) checkActor(caller.actor, rule(params));
  };
  const owner = access.owner;
  const decide =
    owner &&
    (async (request: HandlerRequest, params: Record<string, string>) => {
      const subject = endpoint.subject ? await endpoint.subject(request, services) : {};
      request.subject = subject;
      request.allowed = decideOwner(owner, request.actor!, subject, params);
    });
  if (!access.checkedByHandler) return { endpoint, method: endpoint.method, label, segments, run, access: resolve, check, decide, private: true };
  return {
    endpoint,
    method: endpoint.method,
    label,
    segments,
    run,
    private: true,
    check,
    verify: identify,
    // A signed credential goes to the handler, whose statement checks the rest; any other is
    // resolved here, which says what is wrong with it.
    access: (req) => {
      const credential = signedCredential(services, req.headers.authorization);
      return credential ? { credential } : resolve(req);
    },
  };
}

async function serve(
  services: Services,
  outages: Outages,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  search: string,
  found: Match | undefined,
): Promise<void> {
  const started = process.hrtime.bigint();
  const requestId = requestIdFrom(req.headers['x-request-id']);
  const method = req.method ?? 'GET';
  const route = found?.route;
  const params = found?.params ?? {};
  let answer: Answer;
  let status: number;
  let actor: Actor | undefined;
  let credential: SignedCredential | undefined;
  let request: HandlerRequest | undefined;
  const address = clientAddress(req, services.config.trustProxy);
  try {
    if (!route) {
      if (method === 'OPTIONS' && found?.allowed) answer = { status: 200, text: { type: 'text/plain; charset=utf-8', body: '' } };
      else if (found?.allowed) throw new AppError('method_not_allowed', `${method} is not allowed on ${path}`);
      else throw new AppError('not_found', `no such resource: ${method} ${path}`);
    } else {
      const endpoint = route.endpoint;
      const access = route.access(req);
      const caller = access instanceof Promise ? await access : access;
      ({ actor, credential } = caller);
      try {
        route.check?.(caller, params);
      } catch (refused) {
        // The audit entry of a refused request names its target too, when its input is valid.
        if (endpoint.audit?.target) request = await settled(() => handlerRequest(endpoint, req, res, params, search, caller, requestId, address));
        throw refused;
      }
      try {
        const made = handlerRequest(endpoint, req, res, params, search, caller, requestId, address);
        request = made instanceof Promise ? await made : made;
      } catch (invalid) {
        // A credential left to the handler is still reported before a problem with the input.
        if (credential && route.verify) {
          actor = await route.verify(req);
          route.check?.({ actor }, params);
        }
        throw invalid;
      }
      try {
        if (route.decide) await route.decide(request, params);
        answer = await route.run(request);
      } finally {
        request.answered();
      }
    }
    status = answer.status ?? (answer.body === undefined && !answer.text ? 204 : 200);
    write(res, method, status, requestId, route, answer, found?.allowed);
  } catch (caught) {
    const failure = failureAnswer(caught, requestId, services.log, outages);
    status = failure.status;
    answer = { body: route?.endpoint.errorFields ? { ...failure.body, ...route.endpoint.errorFields(params) } : failure.body };
    if (failure.retryAfter !== undefined) answer.headers = { 'Retry-After': String(failure.retryAfter) };
    if (isAppError(caught) && caught.details.audit) answer.audit = { details: caught.details.audit };
    // A failure after the answer went out is logged, never answered twice.
    if (!res.headersSent) write(res, method, status, requestId, route, answer, found?.allowed);
  }
  const label = route?.label ?? UNMATCHED_ROUTE;
  if (services.metrics) {
    countRequest(services.metrics, method, label, status, started);
    route?.endpoint.count?.(services.metrics, status);
  }
  logRequest(services.log, requestId, method, path, status, started);
  const audit = route?.endpoint.audit;
  if (audit && services.audit && !answer.audit?.written) {
    actor = answer.audit?.actor ?? actor;
    services.audit({
      action: audit.action,
      actor,
      credential,
      via: viaOf(audit, actor, credential),
      target: answer.audit?.target ?? (request && audit.target?.(request)),
      outcome: status < 400 ? 'ok' : status === 401 || status === 403 ? 'denied' : 'failed',
      address,
      requestId,
      details: answer.audit?.details,
    });
  }
}

/** How the caller of an audited request proved who it is. */
function viaOf(audit: NonNullable<Endpoint['audit']>, actor: Actor | undefined, credential: SignedCredential | undefined): AuditVia | undefined {
  return audit.via ?? (actor ? (actor.projectToken ? 'token' : 'session') : credential ? (credential.kind === 'project' ? 'token' : 'session') : undefined);
}

/**
 * The handler's request: the input parsed by the endpoint's schemas (a 400 for what they refuse),
 * at once when there is no body to read.
 */
function handlerRequest(
  endpoint: Endpoint,
  req: IncomingMessage,
  res: ServerResponse,
  params: Record<string, string>,
  search: string,
  caller: Caller,
  requestId: string,
  address: string,
): HandlerRequest | Promise<HandlerRequest> {
  const parsedParams = endpoint.params ? parse(endpoint.params, params) : params;
  const query = endpoint.query ? parseQuery(endpoint.query, parseQueryString(search)) : {};
  const made = (body: unknown) => new HandlerRequest(parsedParams, query, body, caller.actor, caller.credential, requestId, address, req.headers, res, endpoint);
  const schema = endpoint.body;
  if (!schema) return made(undefined);
  return readJson(req, { optional: endpoint.bodyOptional }).then((raw) => made(parse(schema, raw)));
}

/** What `make` gives, or undefined when it throws or rejects. */
async function settled<T>(make: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await make();
  } catch {
    return undefined;
  }
}

function write(res: ServerResponse, method: string, status: number, requestId: string, route: Route | undefined, answer: Answer, allowed: string[] | undefined): void {
  // Set by name rather than spread into a new object, as HandlerRequest's fields are (its comment says why).
  const headers: Record<string, string | number> = {
    'X-Request-Id': requestId,
    'X-Content-Type-Options': SECURITY_HEADERS['X-Content-Type-Options'],
    'Referrer-Policy': SECURITY_HEADERS['Referrer-Policy'],
  };
  if (answer.headers) Object.assign(headers, answer.headers);
  if (route?.private) headers['Cache-Control'] = 'no-store';
  if (allowed) headers.Allow = allowed.join(', ');
  let text: string | undefined;
  if (answer.text) {
    text = answer.text.body;
    headers['Content-Type'] = answer.text.type;
  } else if (answer.body !== undefined && status !== 204) {
    text = JSON.stringify(answer.body);
    headers['Content-Type'] = 'application/json; charset=utf-8';
  }
  if (text !== undefined) headers['Content-Length'] = Buffer.byteLength(text);
  res.writeHead(status, headers);
  res.end(method === 'HEAD' ? undefined : text);
}
