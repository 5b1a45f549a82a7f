// The calls the page makes, relative to the page so the server may sit under a base path.
import { codeForStatus, isWireErrorCode, type WireErrorCode } from '../../common/errors.js';
import type { TokenResponse } from '../../common/schemas/auth.js';
import type { EnvironmentList, PromotionPage } from '../../common/schemas/environments.js';
import type { SearchFilters, SearchResult } from '../../common/schemas/repositories.js';
import type { Me } from '../../common/schemas/users.js';

/** Why a call failed: the server's error code, or the page's own `unreachable` when no answer came at all. */
export class ApiError extends Error {
  constructor(
    readonly code: WireErrorCode | 'unreachable',
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A call that gets no answer within this time counts as the server being down. */
const TIMEOUT_MS = 20_000;

/** `../v1/...` from `{base}/public/index.html` is `{base}/v1/...`. */
export function apiUrl(path: string, query?: URLSearchParams): string {
  const url = new URL(`../v1/${path}`, document.baseURI);
  if (query) url.search = query.toString();
  return url.href;
}

interface ErrorBodyLike {
  _message?: { code?: unknown; message?: unknown };
}

async function call<T>(url: string, init: RequestInit, signal?: AbortSignal): Promise<T> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      headers: { Accept: 'application/json', ...init.headers },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError('unreachable', 0, 'no answer from the server');
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (response.ok && body !== undefined) return body as T;
  const fromServer = (body as ErrorBodyLike | undefined)?._message;
  const code = isWireErrorCode(fromServer?.code) ? fromServer.code : codeForStatus(response.status);
  const message =
    typeof fromServer?.message === 'string' ? fromServer.message : `HTTP ${response.status} ${response.statusText}`.trim();
  throw new ApiError(code, response.status, message);
}

export function search(
  body: SearchFilters,
  query: URLSearchParams,
  token: string | undefined,
  signal: AbortSignal,
): Promise<SearchResult> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  return call<SearchResult>(apiUrl('repositories/search', query), { method: 'POST', headers, body: JSON.stringify(body) }, signal);
}

function bearer(token: string | undefined): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** A project's environments, each with its current version of each artifact. */
export function environments(projectName: string, token: string | undefined, signal: AbortSignal): Promise<EnvironmentList> {
  return call<EnvironmentList>(apiUrl(`projects/${encodeURIComponent(projectName)}/environments`), { method: 'GET', headers: bearer(token) }, signal);
}

/** The newest promotions of one artifact of a project, in every environment. */
export function promotions(
  key: { projectName: string; groupId: string; artifactId: string },
  size: number,
  token: string | undefined,
  signal: AbortSignal,
): Promise<PromotionPage> {
  const query = new URLSearchParams({ ...key, size: String(size) });
  return call<PromotionPage>(apiUrl('promotions', query), { method: 'GET', headers: bearer(token) }, signal);
}

export function generateToken(username: string, password: string): Promise<TokenResponse> {
  return call<TokenResponse>(apiUrl('authentication/generate-token'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
}

/** Who a token belongs to: checks a project token before the page keeps it. */
export function whoAmI(token: string): Promise<Me> {
  return call<Me>(apiUrl('users/me'), { method: 'GET', headers: { Authorization: `Bearer ${token}` } });
}
