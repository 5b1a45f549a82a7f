// A stand-in for GitHub Actions' OpenID Connect side on 127.0.0.1, for the command line's and the
// page's tests of trusted publishing: an issuer (discovery document and JWK Set, keys made and
// tokens signed with jose) and the job's ID token request endpoint.
//
// Copied from GitHub's behaviour: the endpoint is what ACTIONS_ID_TOKEN_REQUEST_URL names (GitHub's
// carries `?api-version=2.0`); `getIDToken` of @actions/core (packages/core/src/oidc-utils.ts) sends a
// GET with `&audience=` and `Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN` and reads
// `{"value"}`. The claims are those of GitHub's "OpenID Connect reference" (both `sub` forms aside:
// the ref form here).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWTPayload } from 'jose';

export interface ActionsIssuer {
  /** The issuer (`iss`), e.g. `http://127.0.0.1:41234`. */
  issuer: string;
  /** What ACTIONS_ID_TOKEN_REQUEST_URL is set to. */
  requestUrl: string;
  /** What ACTIONS_ID_TOKEN_REQUEST_TOKEN is set to. */
  requestToken: string;
  /** The claims of the next ID tokens, over githubClaims() of the job. */
  job: Partial<GithubJob>;
  /** Each ID token request: the audience asked for, and whether its bearer was right. */
  requests: { audience: string | null; authorized: boolean }[];
  /** An ID token for this job and audience, as the endpoint would give it. */
  sign(audience: string, extra?: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

export interface GithubJob {
  repository: string;
  repositoryId: string;
  ownerId: string;
  ref: string;
  sha: string;
  runId: string;
}

export const DEFAULT_JOB: GithubJob = {
  repository: 'acme/shop',
  repositoryId: '123456789',
  ownerId: '4567890',
  ref: 'refs/heads/main',
  sha: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b',
  runId: '8711829340',
};

/** The claims of a GitHub Actions ID token for a push workflow of this job. */
export function githubClaims(job: GithubJob): JWTPayload {
  const [owner] = job.repository.split('/');
  const tag = job.ref.startsWith('refs/tags/');
  return {
    sub: `repo:${job.repository}:ref:${job.ref}`,
    ref: job.ref,
    ref_type: tag ? 'tag' : 'branch',
    ref_protected: 'false',
    sha: job.sha,
    repository: job.repository,
    repository_id: job.repositoryId,
    repository_owner: owner,
    repository_owner_id: job.ownerId,
    repository_visibility: 'private',
    run_id: job.runId,
    run_number: '42',
    run_attempt: '1',
    actor: 'octocat',
    actor_id: '583231',
    workflow: 'release',
    workflow_ref: `${job.repository}/.github/workflows/release.yml@${job.ref}`,
    workflow_sha: job.sha,
    job_workflow_ref: `${job.repository}/.github/workflows/release.yml@${job.ref}`,
    job_workflow_sha: job.sha,
    event_name: 'push',
    runner_environment: 'github-hosted',
  };
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function startActionsIssuer(): Promise<ActionsIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = randomUUID();
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const requestToken = `actions-request-${randomUUID()}`;
  const requests: ActionsIssuer['requests'] = [];
  let issuer = '';

  const self: ActionsIssuer = {
    issuer: '',
    requestUrl: '',
    requestToken,
    job: {},
    requests,
    sign: (audience, extra = {}) =>
      new SignJWT({ ...githubClaims({ ...DEFAULT_JOB, ...self.job }), ...extra })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setJti(randomUUID())
        .setIssuedAt()
        .setNotBefore('0s')
        .setExpirationTime('5m')
        .sign(privateKey),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, issuer);
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(200, { issuer, jwks_uri: `${issuer}/.well-known/jwks`, subject_types_supported: ['public', 'pairwise'], id_token_signing_alg_values_supported: ['RS256'] });
    }
    if (url.pathname === '/.well-known/jwks') return json(200, { keys: [jwk] });
    if (url.pathname === '/_apis/token') {
      const audience = url.searchParams.get('audience');
      const authorized = req.headers.authorization === `Bearer ${requestToken}`;
      requests.push({ audience, authorized });
      if (!authorized) return json(401, { message: 'Bad credentials' });
      if (url.searchParams.get('api-version') !== '2.0') return json(400, { message: 'api-version missing' });
      void self.sign(audience ?? issuer).then((value) => json(200, { count: value.length, value }));
      return;
    }
    json(404, { message: 'not found' });
  });
  issuer = await listen(server);
  self.issuer = issuer;
  self.requestUrl = `${issuer}/_apis/token?api-version=2.0`;
  return self;
}
