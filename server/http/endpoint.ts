// One declaration per endpoint: method, path, who may call it, the schemas of its input and output,
// and its handler. The pipeline (server/http/pipeline.ts) compiles the list once at start into the
// routing, validation, auth check, error answers, metrics, access log and audit of each request, and
// the OpenAPI document (server/openapi.ts) is built from the same list.
import type { IncomingHttpHeaders } from 'node:http';
import type * as z from 'zod';
import type { AuditEntry } from '../db/audit.js';
import type { AuditAction } from '../../common/schemas/audit.js';
import type { TokenScope } from '../../common/schemas/tokens.js';
import type { Role } from '../../common/schemas/users.js';
import type { Metrics } from '../metrics.js';
import type { Actor, Services } from '../services/context.js';
import type { SignedCredential } from '../services/context.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call an endpoint.
 * - `public`: no token is read (login, health).
 * - `reader`: a token is read when sent; required only on a server whose search is not public.
 * - an object: a token is required; `role` limits it to one role, `scope` lets project tokens of
 *   that scope in (without one, project tokens are refused: user and token management and the
 *   administration take a session token), `purpose` names what a refused project token was refused, `allowWhileMustChange` lets a user who must change the password through.
 *   `checkedByHandler` hands the handler the signed credential instead of the actor: the handler's
 *   one statement checks what the database knows of it (publishing).
 */
/** The rules that depend on what a request names, by name (server/policy/access.ts, OWNER_RULES). */
export type OwnerRule = 'project' | 'self' | 'environment' | 'events';

/** The rule of what a request names, as a declaration states it; the pipeline applies it before the handler. */
export interface Owner {
  rule: OwnerRule;
  /** What the caller does, as a refusal says it: `delete records`, `make the tokens of`. */
  doing: string;
  /** `self`: an administrator who names no user acts for everyone (a listing), not for itself. */
  everyone?: true;
  /** A refusal answers 404 with this message, as if the thing were not there (another user's token). */
  hiddenAs?: (params: Record<string, string>) => string;
}

/** What an owner rule judges, as the endpoint's `subject` finds it from the request. */
export interface Subject {
  projectName?: string;
  userId?: string;
  environment?: { name: string; protected: boolean };
}

export type Access =
  | 'public'
  | 'reader'
  | {
      role?: Role;
      scope?: TokenScope;
      /** What a refused project token is told was refused (server/policy/access.ts, TokenRule). */
      purpose: string;
      allowWhileMustChange?: (request: { params: Record<string, string> }, actor: Actor) => boolean;
      checkedByHandler?: boolean;
      /**
       * The rule of what the request names (a record's project, a user, an environment), applied by
       * the pipeline before the handler to what the endpoint's `subject` finds (server/policy/access.ts,
       * OWNER_RULES): a refusal under it is a 403 too, and the handler gets what it allowed.
       */
      owner?: Owner;
      /** A session token must be fresh, or the password sent again (server/policy/access.ts, FRESH_LOGIN). */
      freshLogin?: true;
    };

export interface EndpointRequest<P, Q, B, S extends Subject = Subject> {
  params: P;
  query: Q;
  body: B;
  /** What the endpoint's `subject` found (the record, user or environment its rule judged); else empty. */
  subject: S;
  /**
   * What the owner rule allowed: the project or user the handler acts for; undefined for an
   * administrator who named none (every project, or everyone), and on endpoints without the rule.
   */
  allowed: string | undefined;
  /** The caller as the database has it now; undefined on public endpoints, or a reader without a token. */
  actor: Actor | undefined;
  /** Set instead of `actor` on endpoints whose handler checks the credential itself. */
  credential: SignedCredential | undefined;
  requestId: string;
  /** The client's address (server/http/auth.ts, clientAddress). */
  address: string;
  headers: IncomingHttpHeaders;
  /** Aborted when the client goes away: long polls stop waiting. */
  signal: AbortSignal;
  /**
   * The audit entry this request gets should it succeed, without its actor, on an endpoint
   * declared with `audit`: for a handler that writes it with its change (a publish), which then
   * answers `audit: { written: true }`.
   */
  auditEntry(): AuditEntry;
}

/** What a handler answers: status 200 by default (204 without a body). */
export interface Answer {
  status?: number;
  body?: unknown;
  /** A body that is already text, with its content type (the metrics, the YAML description). */
  text?: { type: string; body: string };
  headers?: Record<string, string>;
  /**
   * For the audit entry of an endpoint declared with `audit`: its target and details (never a
   * secret), and its actor where the request carried no token (the user a login proved); or
   * `written`: the handler wrote the entry of its success with its change (EndpointRequest.auditEntry).
   */
  audit?: { target?: string; details?: Record<string, unknown>; actor?: Actor; written?: true };
}

export interface Response {
  description: string;
  schema?: z.ZodType;
  /** A response that is not JSON (`text/plain`, `application/yaml`). */
  contentType?: string;
}

export interface Endpoint<P = unknown, Q = unknown, B = unknown, S extends Subject = Subject> {
  method: Method;
  /** The one place the path is written, with `{name}` for each path parameter. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  access: Access;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** A request without a body (and then without Content-Type) reads as `{}` (the search). */
  bodyOptional?: boolean;
  /**
   * A POST that may be sent again with the same effect and answer (a publish replaces the record of
   * the same coordinates with the same body; a search reads): clients retry it after a lost answer,
   * as they retry every GET. The command line's client is checked against it (test/cli/api-endpoints.test.ts).
   */
  idempotent?: true;
  /**
   * A read that may be answered from the read replica (docs/operations.md, "Read replicas"): its
   * handler then gets services whose `db` is the replica's pool. Every other endpoint runs on the
   * primary, and a write's answer carries the position its client's next reads send back.
   */
  readReplica?: true;
  /** Extra query parameters for the document only (the search's paging, read by its own schema). */
  queryDoc?: Record<string, unknown>[];
  responses: Record<number, Response>;
  /**
   * Recorded in the audit log with its outcome (refusals and failures too), actor, address and
   * request id; `target` names what it acted on, from the validated input.
   */
  audit?: { action: AuditAction; target?: (request: EndpointRequest<P, Q, B>) => string | undefined; via?: 'password' };
  /** Fields every error answer of this endpoint carries besides the error shape (the user routes' `valid`). */
  errorFields?: (params: Record<string, string>) => Record<string, unknown>;
  /** Counts the endpoint's own outcome from its status (publishes, logins), besides every request's count. */
  count?: (metrics: Metrics, status: number) => void;
  /** Served only when this holds (`/metrics` with REPO_MAN_METRICS=false is not). */
  enabled?: (services: Services) => boolean;
  /**
   * What the access rule's `owner` judges, from the validated input (a record's project by its uid,
   * the user a token belongs to); the handler gets it as `subject`, so it is read once.
   */
  subject?: (request: EndpointRequest<P, Q, B, Subject>, services: Services) => S | Promise<S>;
  handler(request: EndpointRequest<P, Q, B, S>, services: Services): Promise<Answer> | Answer;
}

/** Declares an endpoint, typing its handler's input from its schemas. */
export function endpoint<P = Record<string, never>, Q = Record<string, never>, B = undefined, S extends Subject = Subject>(declaration: Endpoint<P, Q, B, S>): Endpoint {
  return declaration as unknown as Endpoint;
}
