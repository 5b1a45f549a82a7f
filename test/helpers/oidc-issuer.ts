// A real OpenID Connect issuer on 127.0.0.1 for the trusted publishing tests, built with jose over
// node:http: the discovery document at `{issuer}/.well-known/openid-configuration`, the JWK Set at
// its `jwks_uri` with Cache-Control, key rotation, outages (connections reset, 500, garbage, no
// answer) and a count of the JWK Set fetches.
//
// The claim sets are shaped as the real issuers write them:
// - GitHub Actions (docs.github.com, "OpenID Connect reference", and the example token of "About
//   security hardening with OpenID Connect"): string ids, `ref` as refs/heads/B or refs/tags/T,
//   `sub` as `repo:OWNER/REPO:ref:REF` or `repo:OWNER/REPO:environment:ENV`, and the immutable form
//   `repo:OWNER@OWNER_ID/REPO@REPO_ID:ref:REF` of repositories created or renamed since July 2026.
// - GitLab CI `id_tokens` (docs.gitlab.com, "OpenID Connect (OIDC) Authentication Using ID Tokens",
//   token payload): `ref` is the bare name, `ref_type` branch or tag, `sub` is
//   `project_path:GROUP/PROJECT:ref_type:branch:ref:B`.
// - The Jenkins oidc-provider plugin (its README, "Claim templates"): `iss` is the Jenkins URL plus
//   `oidc`, `sub` the job URL, `build_number` a number, no `jti` and no `nbf`; further claims only
//   from the administrator's claim templates (here `branch` from BRANCH_NAME).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, type JWK, type JWTPayload, SignJWT, exportJWK, generateKeyPair } from 'jose';

export type IssuerMode = 'ok' | 'reset' | 'error500' | 'garbage' | 'slow';

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface TestIssuer {
  /** The issuer (`iss`), e.g. http://127.0.0.1:PORT/oidc. */
  issuer: string;
  /** How the issuer answers now. */
  mode: IssuerMode;
  /** The `issuer` its discovery document names (default: its own). */
  discoveryIssuer: string | undefined;
  /** The JWK Set's Cache-Control. */
  cacheControl: string;
  /** JWK Set fetches so far. */
  jwksFetches(): number;
  /** The keys it publishes now. */
  publishedKeys(): JWK[];
  /** Signs claims with its current key (or `key`) and the given header additions. */
  sign(claims: JWTPayload, options?: { alg?: string; kid?: string; header?: Record<string, unknown>; key?: SigningKey }): Promise<string>;
  /** A new RSA key, published beside (or instead of) the current ones and used from now on. */
  rotate(options?: { dropOld?: boolean }): Promise<SigningKey>;
  /** A key it does not publish (an attacker's, or a rotation not published yet). */
  unpublishedKey(alg?: string, kid?: string): Promise<SigningKey>;
  close(): Promise<void>;
}

let kids = 0;

async function newKey(alg: string, kid = `k${++kids}`): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

export async function startIssuer(options: { path?: string } = {}): Promise<TestIssuer> {
  const path = options.path ?? '';
  const rsa = await newKey('RS256');
  const ec = await newKey('ES256');
  let current = rsa;
  let published: SigningKey[] = [rsa, ec];
  let fetches = 0;
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer((req, res) => {
    const mode = issuer.mode;
    if (mode === 'reset') {
      req.socket.destroy();
      return;
    }
    if (mode === 'slow') {
      hanging.add(res);
      return;
    }
    if (mode === 'error500') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
      return;
    }
    if (mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json');
      return;
    }
    if (req.url === `${path}/.well-known/openid-configuration`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer: issuer.discoveryIssuer ?? issuer.issuer,
          jwks_uri: `${issuer.issuer}/.well-known/jwks`,
          subject_types_supported: ['public', 'pairwise'],
          response_types_supported: ['id_token'],
          id_token_signing_alg_values_supported: ['RS256'],
          claims_supported: ['sub', 'aud', 'exp', 'iat', 'iss', 'jti', 'nbf', 'ref', 'repository', 'repository_id'],
        }),
      );
      return;
    }
    if (req.url === `${path}/.well-known/jwks`) {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': issuer.cacheControl }).end(JSON.stringify({ keys: published.map((k) => k.publicJwk) }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const issuer: TestIssuer = {
    issuer: `http://127.0.0.1:${port}${path}`,
    mode: 'ok',
    discoveryIssuer: undefined,
    cacheControl: 'public, max-age=3600',
    jwksFetches: () => fetches,
    publishedKeys: () => published.map((k) => k.publicJwk),
    async sign(claims, opts = {}) {
      const key = opts.key ?? (opts.alg === 'ES256' ? ec : current);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: opts.alg ?? key.alg, kid: opts.kid ?? key.kid, typ: 'JWT', ...opts.header })
        .sign(key.privateKey);
    },
    async rotate(opts = {}) {
      const next = await newKey('RS256');
      published = opts.dropOld ? [next, ec] : [...published, next];
      current = next;
      return next;
    },
    unpublishedKey: (alg = 'RS256', kid) => newKey(alg, kid),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return issuer;
}

const seconds = () => Math.floor(Date.now() / 1000);
let jtis = 0;

/** A GitHub Actions ID token's claims for octo-org/octo-repo on main (both `sub` forms: `immutableSub`). */
export function githubClaims(issuer: string, overrides: Record<string, unknown> = {}, options: { immutableSub?: boolean } = {}): JWTPayload {
  const now = seconds();
  const ref = (overrides.ref as string | undefined) ?? 'refs/heads/main';
  const repository = (overrides.repository as string | undefined) ?? 'octo-org/octo-repo';
  const [owner, name] = repository.split('/') as [string, string];
  const ownerId = (overrides.repository_owner_id as string | undefined) ?? '65';
  const repositoryId = (overrides.repository_id as string | undefined) ?? '74';
  const sub = options.immutableSub ? `repo:${owner}@${ownerId}/${name}@${repositoryId}:ref:${ref}` : `repo:${repository}:ref:${ref}`;
  return {
    jti: `gh-${++jtis}-${now}`,
    sub,
    aud: 'repoadmin',
    ref,
    sha: 'e4f1c2a9d0b3f5e6a7b8c9d0e1f2a3b4c5d6e7f8',
    repository,
    repository_owner: owner,
    repository_owner_id: ownerId,
    repository_visibility: 'private',
    repository_id: repositoryId,
    run_id: '9876543210',
    run_number: '10',
    run_attempt: '1',
    runner_environment: 'github-hosted',
    actor_id: '12',
    actor: 'octocat',
    workflow: 'release',
    head_ref: '',
    base_ref: '',
    event_name: 'push',
    ref_type: ref.startsWith('refs/tags/') ? 'tag' : 'branch',
    ref_protected: 'true',
    workflow_ref: `${repository}/.github/workflows/release.yml@${ref}`,
    workflow_sha: 'e4f1c2a9d0b3f5e6a7b8c9d0e1f2a3b4c5d6e7f8',
    job_workflow_ref: `${repository}/.github/workflows/release.yml@${ref}`,
    job_workflow_sha: 'e4f1c2a9d0b3f5e6a7b8c9d0e1f2a3b4c5d6e7f8',
    iss: issuer,
    nbf: now - 5,
    exp: now + 300,
    iat: now,
    ...overrides,
  };
}

/** A GitLab CI ID token's claims for my-group/my-project on main. */
export function gitlabClaims(issuer: string, overrides: Record<string, unknown> = {}): JWTPayload {
  const now = seconds();
  const ref = (overrides.ref as string | undefined) ?? 'main';
  const refType = (overrides.ref_type as string | undefined) ?? 'branch';
  return {
    namespace_id: '72',
    namespace_path: 'my-group',
    project_id: '20',
    project_path: 'my-group/my-project',
    user_id: '1',
    user_login: 'sample-user',
    user_email: 'sample-user@example.com',
    user_access_level: 'maintainer',
    pipeline_id: '574',
    pipeline_source: 'push',
    job_id: '302',
    ref,
    ref_type: refType,
    ref_path: `refs/${refType === 'tag' ? 'tags' : 'heads'}/${ref}`,
    ref_protected: 'true',
    runner_id: 1,
    runner_environment: 'gitlab-hosted',
    sha: '714a629c0b401fdce83e847fc9589983fc6f46bc',
    project_visibility: 'private',
    ci_config_ref_uri: `gitlab.example.com/my-group/my-project//.gitlab-ci.yml@refs/heads/${ref}`,
    ci_config_sha: '714a629c0b401fdce83e847fc9589983fc6f46bc',
    jti: `gl-${++jtis}-${now}`,
    iss: issuer,
    iat: now,
    nbf: now - 5,
    exp: now + 300,
    sub: `project_path:my-group/my-project:ref_type:${refType}:ref:${ref}`,
    aud: 'repoadmin',
    ...overrides,
  };
}

/** The Jenkins oidc-provider plugin's claims for the job app, build 42, with a `branch` claim template. */
export function jenkinsClaims(issuer: string, overrides: Record<string, unknown> = {}): JWTPayload {
  const now = seconds();
  return {
    iss: issuer,
    aud: 'repoadmin',
    sub: 'https://jenkins.example.com/job/app/',
    build_number: 42 + ++jtis,
    branch: 'main',
    iat: now,
    exp: now + 3600,
    ...overrides,
  };
}
