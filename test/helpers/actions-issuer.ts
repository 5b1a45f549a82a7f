// A stand-in for a GitHub Actions job's side of trusted publishing on 127.0.0.1, for the command
// line's and the page's tests: the job's ID token request endpoint, over a real issuer
// (test/helpers/oidc-issuer.ts) that signs GitHub-shaped claims.
//
// Copied from GitHub's behaviour: the endpoint is what ACTIONS_ID_TOKEN_REQUEST_URL names (GitHub's
// carries `?api-version=2.0`); `getIDToken` of @actions/core (packages/core/src/oidc-utils.ts) sends a
// GET with `&audience=` and `Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN` and reads
// `{"value"}`; a wrong bearer is refused.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { githubClaims, startIssuer, type TestIssuer } from './oidc-issuer.js';

/** The job the tests run as: acme/shop on main (claims over githubClaims' defaults). */
export const DEFAULT_JOB = {
  repository: 'acme/shop',
  repositoryId: '123456789',
  ownerId: '4567890',
  sha: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b',
  runId: '8711829340',
} as const;

export interface ActionsIssuer {
  /** The issuer (`iss`). */
  issuer: string;
  /** What ACTIONS_ID_TOKEN_REQUEST_URL is set to. */
  requestUrl: string;
  /** What ACTIONS_ID_TOKEN_REQUEST_TOKEN is set to. */
  requestToken: string;
  /** Claims of the next ID tokens over those of DEFAULT_JOB (e.g. another `repository` or `ref`). */
  job: Record<string, unknown>;
  /** Each ID token request: the audience asked for, and whether its bearer was right. */
  requests: { audience: string | null; authorized: boolean }[];
  /** An ID token of the job for this audience, as the endpoint gives it. */
  sign(audience: string): Promise<string>;
  close(): Promise<void>;
}

export async function startActionsIssuer(): Promise<ActionsIssuer> {
  const issuer: TestIssuer = await startIssuer();
  const requestToken = `actions-request-${randomUUID()}`;
  const requests: ActionsIssuer['requests'] = [];

  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://127.0.0.1');
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname !== '/_apis/token') return json(404, { message: 'Not Found' });
    const audience = url.searchParams.get('audience');
    const authorized = req.headers.authorization === `Bearer ${requestToken}`;
    requests.push({ audience, authorized });
    if (!authorized) return json(401, { message: 'Bad credentials' });
    if (url.searchParams.get('api-version') !== '2.0') return json(400, { message: 'api-version is required' });
    self.sign(audience ?? 'https://github.com/acme').then(
      (value) => json(200, { count: value.length, value }),
      () => json(500, { message: 'could not sign' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const self: ActionsIssuer = {
    issuer: issuer.issuer,
    requestUrl: `http://127.0.0.1:${port}/_apis/token?api-version=2.0`,
    requestToken,
    job: {},
    requests,
    sign: (audience) =>
      issuer.sign(
        githubClaims(issuer.issuer, {
          repository: DEFAULT_JOB.repository,
          repository_id: DEFAULT_JOB.repositoryId,
          repository_owner_id: DEFAULT_JOB.ownerId,
          sha: DEFAULT_JOB.sha,
          run_id: DEFAULT_JOB.runId,
          ...self.job,
          aud: audience,
        }),
      ),
    close: async () => {
      server.closeAllConnections();
      await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), issuer.close()]);
    },
  };
  return self;
}
