// The ID token a CI service offers this run, for trusted publishing (docs/pipelines.md): given as
// REPOADMIN_ID_TOKEN (GitLab's `id_tokens:`, Jenkins' credentials binding, any CI), or asked of
// GitHub Actions' token service, whose two variables a job with `permissions: id-token: write` gets.
import { HTTPError } from 'ky';
import { AppError } from '../../common/errors.js';
import { createClient, networkFailure } from '../http.js';

/** Where this run's ID token comes from, before it is fetched; undefined when the CI offers none. */
export type IdTokenSource =
  | { kind: 'variable'; name: 'REPOADMIN_ID_TOKEN'; token: string }
  | { kind: 'github'; requestUrl: string; requestToken: string };

export function idTokenSource(env: NodeJS.ProcessEnv): IdTokenSource | undefined {
  if (env.REPOADMIN_ID_TOKEN) return { kind: 'variable', name: 'REPOADMIN_ID_TOKEN', token: env.REPOADMIN_ID_TOKEN.trim() };
  const { ACTIONS_ID_TOKEN_REQUEST_URL: requestUrl, ACTIONS_ID_TOKEN_REQUEST_TOKEN: requestToken } = env;
  if (requestUrl && requestToken) return { kind: 'github', requestUrl, requestToken };
  return undefined;
}

/** What the source is called in messages. */
export function describeSource(source: IdTokenSource): string {
  return source.kind === 'github' ? 'GitHub Actions' : source.name;
}

/** How the GitHub Actions token service reads in messages about failing to reach it. */
const ACTIONS_PEER = (origin: string) => ({
  name: `the GitHub Actions token service at ${origin}`,
  addressHint: 'Check ACTIONS_ID_TOKEN_REQUEST_URL',
  refusedHint: 'Is this step running in GitHub Actions?',
  timeoutHint: 'Set REPOADMIN_TIMEOUT (seconds) to wait longer',
});

/**
 * GitHub Actions' ID token for `audience`: a GET of ACTIONS_ID_TOKEN_REQUEST_URL with `&audience=`,
 * bearer ACTIONS_ID_TOKEN_REQUEST_TOKEN, answering `{"value": "<JWT>"}` (the behaviour of
 * `getIDToken` in @actions/core, packages/core/src/oidc-utils.ts).
 */
export async function requestGithubIdToken(
  source: Extract<IdTokenSource, { kind: 'github' }>,
  audience: string,
  options: { timeoutMs: number; log?: (line: string) => void },
): Promise<string> {
  let url: URL;
  try {
    url = new URL(source.requestUrl);
  } catch {
    throw new AppError('usage', 'ACTIONS_ID_TOKEN_REQUEST_URL is not an address');
  }
  url.searchParams.set('audience', audience);
  const client = createClient({ baseUrl: url.origin, timeoutMs: options.timeoutMs, log: options.log });
  let body: unknown;
  try {
    const response = await client(`${url.pathname.slice(1)}${url.search}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${source.requestToken}`, accept: 'application/json' },
    });
    body = await response.json().catch(() => undefined);
  } catch (error) {
    if (error instanceof HTTPError) {
      const status = `${error.response.status} ${error.response.statusText}`.trim();
      throw new AppError(
        'unauthorized',
        `GitHub Actions refused to issue an ID token (${status}): the job needs "permissions: id-token: write" (docs/pipelines.md)`,
      );
    }
    throw networkFailure(error, ACTIONS_PEER(url.origin), options.timeoutMs);
  }
  const value = (body as { value?: unknown } | undefined)?.value;
  if (typeof value !== 'string' || !value) {
    throw new AppError('unauthorized', `the GitHub Actions token service at ${url.origin} answered without an ID token (no "value")`);
  }
  return value;
}
