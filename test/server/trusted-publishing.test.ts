// Trusted publishing (docs/api.md, "Trusted publishing") against real OpenID Connect issuers on
// 127.0.0.1 (test/helpers/oidc-issuer.ts), on every database kind: the publishers and their rules,
// the exchange of GitHub, GitLab and Jenkins ID tokens, every refusal with its status and message,
// publishing through the exchanged token with provenance, and the issuer's outages.
import { UnsecuredJWT, decodeJwt, exportSPKI } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { keyCacheOf } from '../../server/services/oidc.js';
import type { Services } from '../../server/services/context.js';
import { actorFromProjectToken } from '../../server/services/tokens.js';
import { dbKinds } from '../helpers/db.js';
import { type TestIssuer, githubClaims, gitlabClaims, jenkinsClaims, startIssuer } from '../helpers/oidc-issuer.js';
import { eventually } from '../helpers/receiver.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

interface Refusal {
  name: string;
  status: number;
  message: RegExp;
  token: () => Promise<string>;
  projectName?: string;
}

describe.each(dbKinds())('trusted publishing on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let gh: TestIssuer;
  let gl: TestIssuer;
  let jk: TestIssuer;
  const issuers: TestIssuer[] = [];
  const publishers: Record<string, string> = {};
  const exchanged: string[] = [];

  const exchange = (token: string, projectName?: string) =>
    server.request('POST', '/v1/authentication/oidc', { body: { token, ...(projectName ? { projectName } : {}) } });
  const addPublisher = async (body: Record<string, unknown>) => {
    const res = await server.request('POST', '/v1/trusted-publishers', { token: admin, body });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  };
  const newIssuer = async (path?: string) => {
    const issuer = await startIssuer({ path });
    issuers.push(issuer);
    return issuer;
  };
  const publish = (token: string, body: Record<string, unknown>) =>
    server.request('POST', '/v1/repositories', {
      token,
      body: { projectName: 'octo', branch: 'main', artifact: { groupId: 'org.octo', artifactId: 'app', version: '1.0.0' }, ...body },
    });
  const exchangeOk = async (token: string, projectName?: string) => {
    const res = await exchange(token, projectName);
    expect(res.status, res.text).toBe(200);
    exchanged.push(res.body.token);
    return res.body;
  };

  beforeAll(async () => {
    const base = loadConfig([], {});
    server = await startTestServer({
      kind,
      config: { oidc: { ...base.oidc, allowNetworks: ['127.0.0.0/8'] }, immutableVersions: /^[0-9.]+$/u },
    });
    admin = await server.adminToken();
    gh = await newIssuer();
    gl = await newIssuer();
    jk = await newIssuer('/oidc');
    publishers.github = await addPublisher({
      projectName: 'octo',
      provider: 'github',
      issuer: gh.issuer,
      claims: { repository: 'octo-org/octo-repo', repository_owner_id: '65', repository_id: '74' },
      branches: ['main', 'release/*'],
      environments: ['prod'],
    });
    publishers.gitlab = await addPublisher({
      projectName: 'mygroup',
      provider: 'gitlab',
      issuer: gl.issuer,
      claims: { project_path: 'my-group/my-project', project_id: '20' },
      branches: ['main'],
    });
    publishers.jenkins = await addPublisher({
      projectName: 'jobs',
      provider: 'jenkins',
      issuer: jk.issuer,
      claims: { sub: 'https://jenkins.example.com/job/app/' },
      refClaim: 'branch',
      branches: ['main'],
    });
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all(issuers.map((i) => i.close()));
  });

  describe('trusted publishers', () => {
    it('are managed by administrators only, and checked whole', async () => {
      const user = await server.request('POST', '/v1/users', { token: admin, body: { username: 'tp-user', password: 'secret-pw-1', projectName: 'octo', role: 'ROLE_USER' } });
      expect(user.status, user.text).toBe(201);
      const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'tp-user', password: 'secret-pw-1' } });
      const asUser = await server.request('GET', '/v1/trusted-publishers', { token: login.body.token });
      expect(asUser.status).toBe(403);

      const bad = async (body: Record<string, unknown>, path: string, message: RegExp) => {
        const res = await server.request('POST', '/v1/trusted-publishers', { token: admin, body: { projectName: 'octo', provider: 'github', issuer: gh.issuer, claims: { repository: 'a/b' }, ...body } });
        expect(res.status, res.text).toBe(400);
        expect(res.body.errors[0].path).toBe(path);
        expect(res.body.errors[0].message).toMatch(message);
      };
      await bad({ claims: { repository_owner: 'octo-org' } }, 'claims', /must pin "repository_id" or "repository"/);
      await bad({ claims: { repository: '*' } }, 'claims', /not only wildcards/);
      await bad({ provider: 'gitlab', claims: { namespace_path: 'g' } }, 'claims', /"project_id" or "project_path"/);
      await bad({ provider: 'jenkins', issuer: undefined, claims: { sub: 'x' } }, 'issuer', /must name its issuer/);
      await bad({ issuer: 'https://169.254.169.254' }, 'issuer', /link-local/);
      await bad({ issuer: 'ftp://example.com' }, 'issuer', /https URL/);
      await bad({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, 'jwks.keys.0', /public keys only/);

      const made = await server.request('POST', '/v1/trusted-publishers', { token: admin, body: { projectName: 'spare', provider: 'github', claims: { repository_id: '1' } } });
      expect(made.status, made.text).toBe(201);
      expect(made.body).toMatchObject({ issuer: 'https://token.actions.githubusercontent.com', audience: 'repoadmin', branches: ['*'], environments: null, jwks: null });
      const changed = await server.request('PATCH', `/v1/trusted-publishers/${made.body.id}`, { token: admin, body: { branches: ['main'], description: 'release pipeline' } });
      expect(changed.status, changed.text).toBe(200);
      expect(changed.body).toMatchObject({ branches: ['main'], description: 'release pipeline', claims: { repository_id: '1' } });
      const unpinned = await server.request('PATCH', `/v1/trusted-publishers/${made.body.id}`, { token: admin, body: { claims: { actor: 'x' } } });
      expect(unpinned.status).toBe(400);
      const listed = await server.request('GET', '/v1/trusted-publishers?projectName=spare', { token: admin });
      expect(listed.body.publishers.map((p: { id: string }) => p.id)).toEqual([made.body.id]);
      expect((await server.request('DELETE', `/v1/trusted-publishers/${made.body.id}`, { token: admin })).status).toBe(204);
      expect((await server.request('GET', `/v1/trusted-publishers/${made.body.id}`, { token: admin })).status).toBe(404);
      const audited = () => server.db('audit').select('action', 'outcome').where({ target: made.body.id }).orderBy('id');
      await eventually(async () => (await audited()).length === 4, 20_000, 'the audit entries');
      expect(await audited()).toEqual([
        { action: 'trusted_publisher.created', outcome: 'ok' },
        { action: 'trusted_publisher.changed', outcome: 'ok' },
        { action: 'trusted_publisher.changed', outcome: 'failed' },
        { action: 'trusted_publisher.deleted', outcome: 'ok' },
      ]);
    });

    it('tells the audience without a token', async () => {
      const res = await server.request('GET', '/v1/authentication/oidc/audience');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ audience: 'repoadmin' });
    });
  });

  describe('the exchange and a publish with provenance', () => {
    it('exchanges a GitHub Actions ID token for a project token bound to the branch, and publishes a verified record', async () => {
      const idToken = await gh.sign(githubClaims(gh.issuer, { environment: 'prod' }, { immutableSub: true }));
      const body = await exchangeOk(idToken, 'octo');
      expect(body).toMatchObject({ projectName: 'octo', branch: 'main', scopes: ['publish', 'promote'], publisherId: publishers.github });
      expect(body.token).toMatch(/^rpa_/);
      const minutes = (Date.parse(body.expiresAt) - Date.now()) / 60_000;
      expect(minutes).toBeGreaterThan(13);
      expect(minutes).toBeLessThanOrEqual(15);
      // The other engineer's promotion reads the environments from the actor.
      const actor = await actorFromProjectToken({ db: server.db, config: server.config, now: () => new Date() } as unknown as Services, body.token);
      expect(actor.projectToken?.promoteEnvironments).toEqual(['prod']);

      const tokens = await server.request('GET', '/v1/tokens', { token: admin });
      expect(tokens.body.tokens.find((t: { id: string }) => t.id === body.tokenId)).toMatchObject({ kind: 'oidc', branch: 'main', publisherId: publishers.github, projectName: 'octo' });

      const published = await publish(body.token, { repositoryUrl: 'https://github.com/Octo-Org/octo-repo.git/', description: 'built by CI' });
      expect(published.status, published.text).toBe(201);
      const record = await server.request('GET', `/v1/repositories/${published.body.uid}`, { token: admin });
      const claims = decodeJwt(idToken);
      expect(record.body.provenance).toEqual({
        issuer: gh.issuer,
        subject: claims.sub,
        repository: 'octo-org/octo-repo',
        repositoryId: '74',
        ref: 'refs/heads/main',
        sha: claims.sha,
        workflow: 'octo-org/octo-repo/.github/workflows/release.yml@refs/heads/main',
        runId: '9876543210',
        runUrl: 'https://github.com/octo-org/octo-repo/actions/runs/9876543210',
        environment: 'prod',
        publisherId: publishers.github,
        verifiedAt: expect.any(String),
      });
      // The request's own claims are not provenance: a body field of that name is not read.
      const forged = await publish(body.token, { artifact: { groupId: 'org.octo', artifactId: 'app', version: '1.0.1-SNAPSHOT' }, provenance: { issuer: 'https://evil' } });
      expect([201, 400]).toContain(forged.status);

      // A republish through a password keeps the provenance.
      const again = await publish(admin, { repositoryUrl: 'https://github.com/Octo-Org/octo-repo.git/', description: 'built by CI' });
      expect(again.status, again.text).toBe(200);
      expect((await server.request('GET', `/v1/repositories/${published.body.uid}`, { token: admin })).body.provenance.runId).toBe('9876543210');

      // Another build of the immutable version: 409.
      const other = await exchangeOk(await gh.sign(githubClaims(gh.issuer, { run_id: '111' })), 'octo');
      const conflict = await publish(other.token, { repositoryUrl: 'https://github.com/Octo-Org/octo-repo.git/', description: 'built by CI' });
      expect(conflict.status, conflict.text).toBe(409);
      expect(conflict.body._message.message).toMatch(/published by another build .*actions\/runs\/9876543210/);

      // Search: provenance in results, and the verified filter.
      const unverified = await publish(admin, { artifact: { groupId: 'org.octo', artifactId: 'app', version: '0.9.0' } });
      expect(unverified.status).toBe(201);
      const all = await server.request('POST', '/v1/repositories/search', { token: admin, body: { projectName: 'octo', artifactId: 'app' } });
      const byUid = Object.fromEntries(all.body.versionInformation.map((v: { uid: string; provenance: unknown }) => [v.uid, v.provenance]));
      expect(byUid[unverified.body.uid]).toBeNull();
      expect(byUid[published.body.uid]).toMatchObject({ runId: '9876543210' });
      const verified = await server.request('POST', '/v1/repositories/search', { token: admin, body: { projectName: 'octo', artifactId: 'app', verified: true } });
      expect(verified.body.versionInformation.map((v: { uid: string }) => v.uid)).toContain(published.body.uid);
      expect(verified.body.versionInformation.map((v: { uid: string }) => v.uid)).not.toContain(unverified.body.uid);
      expect(verified.body.page.totalElements).toBe(verified.body.versionInformation.length);

      // The audit: accepted and refused exchanges, with iss, sub and jti, never the token.
      await exchange(idToken, 'octo');
      await eventually(async () => (await server.db('audit').where({ action: 'token.exchanged' })).length >= 3, 20_000, 'the audit entries');
      const entries = await server.db('audit').where({ action: 'token.exchanged' });
      const text = JSON.stringify(entries);
      expect(text).not.toContain(idToken.split('.')[2]);
      expect(text).not.toContain(body.token);
      const accepted = entries.map((e: { details: unknown; outcome: string }) => ({ outcome: e.outcome, details: typeof e.details === 'string' ? JSON.parse(e.details) : e.details }));
      expect(accepted).toContainEqual({ outcome: 'ok', details: expect.objectContaining({ publisherId: publishers.github, iss: gh.issuer, sub: claims.sub, jti: claims.jti, tokenId: body.tokenId }) });
      expect(accepted).toContainEqual({ outcome: 'denied', details: expect.objectContaining({ iss: gh.issuer, jti: claims.jti, reason: expect.stringMatching(/exchanged already/) }) });
    });

    it('a GitLab tag build publishes only to the branches its publisher allows, and keeps the tag', async () => {
      const body = await exchangeOk(await gl.sign(gitlabClaims(gl.issuer, { ref: 'v2.0.0', ref_type: 'tag' })));
      expect(body).toMatchObject({ projectName: 'mygroup', branch: null, scopes: ['publish'] });
      const record = { projectName: 'mygroup', artifact: { groupId: 'g', artifactId: 'lib', version: '2.0.0' } };
      const elsewhere = await server.request('POST', '/v1/repositories', { token: body.token, body: { ...record, branch: 'feature' } });
      expect(elsewhere.status).toBe(403);
      expect(elsewhere.body._message.message).toMatch(/tag build: it may publish only to the branches its trusted publisher allows \("main"\), not to "feature"/);
      const onMain = await server.request('POST', '/v1/repositories', { token: body.token, body: { ...record, branch: 'main' } });
      expect(onMain.status, onMain.text).toBe(201);
      const stored = await server.request('GET', `/v1/repositories/${onMain.body.uid}`, { token: admin });
      expect(stored.body.repositoryUrl).toBe(`${gl.issuer}/my-group/my-project`);
      expect(stored.body.provenance).toMatchObject({ ref: 'refs/tags/v2.0.0', repository: 'my-group/my-project', repositoryId: '20', runId: '574', runUrl: `${gl.issuer}/my-group/my-project/-/pipelines/574` });
      // Deleted and restored, it keeps its provenance.
      expect((await server.request('DELETE', `/v1/repositories/${onMain.body.uid}?force=true`, { token: admin })).status).toBe(204);
      expect((await server.request('POST', `/v1/trash/${onMain.body.uid}/restore`, { token: admin })).status).toBe(200);
      expect((await server.request('GET', `/v1/repositories/${onMain.body.uid}`, { token: admin })).body.provenance).toEqual(stored.body.provenance);
    });

    it('a Jenkins ID token (no jti) is accepted once, by its signature', async () => {
      const token = await jk.sign(jenkinsClaims(jk.issuer, { build_number: 7 }));
      const body = await exchangeOk(token);
      expect(body).toMatchObject({ projectName: 'jobs', branch: 'main' });
      const res = await server.request('POST', '/v1/repositories', { token: body.token, body: { projectName: 'jobs', branch: 'main', artifact: { groupId: 'g', artifactId: 'job', version: '7' } } });
      expect(res.status, res.text).toBe(201);
      const stored = await server.request('GET', `/v1/repositories/${res.body.uid}`, { token: admin });
      expect(stored.body.provenance).toMatchObject({ subject: 'https://jenkins.example.com/job/app/', runId: '7', runUrl: 'https://jenkins.example.com/job/app/7/', repository: null });
      const replay = await exchange(token);
      expect(replay.status).toBe(401);
      expect(replay.body._message.message).toMatch(/exchanged already/);
    });

    it('a publisher with its own key set needs no discovery', async () => {
      const offline = await newIssuer();
      await addPublisher({ projectName: 'airgap', provider: 'generic', issuer: offline.issuer, claims: { sub: 'build-bot' }, jwks: { keys: offline.publishedKeys() } });
      offline.mode = 'reset';
      const body = await exchangeOk(await offline.sign({ iss: offline.issuer, aud: 'repoadmin', sub: 'build-bot', ref: 'refs/heads/main', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60, jti: 'air-1' }));
      expect(body.projectName).toBe('airgap');
      expect(offline.jwksFetches()).toBe(0);
    });

    it('an issuer whose iss ends with a slash is taken as written', async () => {
      const slashed = await newIssuer();
      const iss = `${slashed.issuer}/`;
      slashed.discoveryIssuer = iss;
      await addPublisher({ projectName: 'slashed', provider: 'generic', issuer: iss, claims: { sub: 'bot' } });
      const now = Math.floor(Date.now() / 1000);
      const body = await exchangeOk(await slashed.sign({ iss, aud: 'repoadmin', sub: 'bot', ref: 'main', iat: now, exp: now + 60, jti: 'slash-1' }));
      expect(body).toMatchObject({ projectName: 'slashed', branch: 'main' });
    });

    it('without projectName, publishers of two projects matching is 409 naming them', async () => {
      await addPublisher({ projectName: 'octo-mirror', provider: 'github', issuer: gh.issuer, claims: { repository: 'octo-org/mirror' } });
      await addPublisher({ projectName: 'octo-mirror-2', provider: 'github', issuer: gh.issuer, claims: { repository: 'octo-org/mirror' } });
      const res = await exchange(await gh.sign(githubClaims(gh.issuer, { repository: 'octo-org/mirror' })));
      expect(res.status).toBe(409);
      expect(res.body._message.message).toMatch(/several projects .*"octo-mirror", "octo-mirror-2".*projectName/);
      expect((await exchange(await gh.sign(githubClaims(gh.issuer, { repository: 'octo-org/mirror' })), 'octo-mirror-2')).status).toBe(200);
    });

    it('deleting a publisher revokes the tokens it made', async () => {
      const id = await addPublisher({ projectName: 'shortlived', provider: 'github', issuer: gh.issuer, claims: { repository: 'octo-org/shortlived' } });
      const body = await exchangeOk(await gh.sign(githubClaims(gh.issuer, { repository: 'octo-org/shortlived' })));
      expect((await server.request('DELETE', `/v1/trusted-publishers/${id}`, { token: admin })).status).toBe(204);
      const res = await server.request('POST', '/v1/repositories', { token: body.token, body: { projectName: 'shortlived', branch: 'main', artifact: { groupId: 'g', artifactId: 'a', version: '1' } } });
      expect(res.status).toBe(401);
      expect(res.body._message.message).toMatch(/revoked/);
    });
  });

  describe('refusals', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const refusals: Refusal[] = [
      { name: 'not a JWT', status: 401, message: /not a signed JWT/, token: async () => 'not.a-jwt' },
      { name: 'alg none', status: 401, message: /algorithm "none" is not accepted/, token: async () => new UnsecuredJWT(githubClaims(gh.issuer)).encode() },
      {
        name: 'HS256 with the public key as secret',
        status: 401,
        message: /algorithm "HS256" is not accepted/,
        token: async () => {
          const { SignJWT, importJWK } = await import('jose');
          const pem = await exportSPKI((await importJWK(gh.publishedKeys()[0]!, 'RS256')) as CryptoKey);
          return new SignJWT(githubClaims(gh.issuer)).setProtectedHeader({ alg: 'HS256', kid: gh.publishedKeys()[0]!.kid }).sign(new TextEncoder().encode(pem));
        },
      },
      { name: 'RS256 header, HS512 claimed', status: 401, message: /algorithm "HS512" is not accepted/, token: async () => {
        const { SignJWT } = await import('jose');
        return new SignJWT(githubClaims(gh.issuer)).setProtectedHeader({ alg: 'HS512' }).sign(new TextEncoder().encode('x'.repeat(64)));
      } },
      { name: 'EdDSA', status: 401, message: /algorithm "EdDSA" is not accepted/, token: async () => gh.sign(githubClaims(gh.issuer), { key: await gh.unpublishedKey('EdDSA') }) },
      {
        name: 'embedded jwk',
        status: 401,
        message: /header carries "jwk"/,
        token: async () => {
          const attacker = await gh.unpublishedKey();
          return gh.sign(githubClaims(gh.issuer), { key: attacker, header: { jwk: attacker.publicJwk } });
        },
      },
      { name: 'jku', status: 401, message: /header carries "jku"/, token: async () => gh.sign(githubClaims(gh.issuer), { header: { jku: 'https://evil.example/jwks' } }) },
      { name: 'x5u', status: 401, message: /header carries "x5u"/, token: async () => gh.sign(githubClaims(gh.issuer), { header: { x5u: 'https://evil.example/cert.pem' } }) },
      { name: 'x5c', status: 401, message: /header carries "x5c"/, token: async () => gh.sign(githubClaims(gh.issuer), { header: { x5c: ['MIIB'] } }) },
      {
        name: 'signed by another key under the issuer\'s kid',
        status: 401,
        message: /signature does not verify with the keys of the issuer/,
        token: async () => gh.sign(githubClaims(gh.issuer), { key: await gh.unpublishedKey('RS256', gh.publishedKeys()[0]!.kid) }),
      },
      {
        name: 'claims changed after signing',
        status: 401,
        message: /signature does not verify/,
        token: async () => {
          const [h, , s] = (await gh.sign(githubClaims(gh.issuer))).split('.');
          const forged = Buffer.from(JSON.stringify(githubClaims(gh.issuer, { ref: 'refs/heads/main', repository: 'octo-org/octo-repo', run_id: '1' }))).toString('base64url');
          return `${h}.${forged}.${s}`;
        },
      },
      { name: 'unknown issuer', status: 401, message: /issuer "https:\/\/evil.example" is not the issuer of any trusted publisher/, token: async () => gh.sign(githubClaims('https://evil.example')) },
      { name: 'no issuer', status: 401, message: /issuer null is not the issuer/, token: async () => gh.sign(githubClaims(gh.issuer, { iss: undefined })) },
      { name: 'wrong audience', status: 401, message: /aud does not contain "repoadmin"/, token: async () => gh.sign(githubClaims(gh.issuer, { aud: 'https://github.com/octo-org' })) },
      { name: 'expired', status: 401, message: /expired/, token: async () => gh.sign(githubClaims(gh.issuer, { iat: now() - 600, nbf: now() - 600, exp: now() - 120 })) },
      { name: 'expired within the clock skew', status: 401, message: /has expired \(exp/, token: async () => gh.sign(githubClaims(gh.issuer, { iat: now() - 600, exp: now() - 5 })) },
      { name: 'iat in the future beyond the skew', status: 401, message: /issued in the future/, token: async () => gh.sign(githubClaims(gh.issuer, { iat: now() + 120, nbf: now() - 5, exp: now() + 600 })) },
      { name: 'nbf in the future beyond the skew', status: 401, message: /not valid yet/, token: async () => gh.sign(githubClaims(gh.issuer, { nbf: now() + 120 })) },
      { name: 'lifetime over 1 hour', status: 401, message: /lives 3900 s/, token: async () => gh.sign(githubClaims(gh.issuer, { iat: now() - 300, exp: now() + 3600 })) },
      { name: 'no exp', status: 401, message: /exp/, token: async () => gh.sign(githubClaims(gh.issuer, { exp: undefined })) },
      { name: 'no jti on github', status: 401, message: /carries no jti, which github ID tokens always have/, token: async () => gh.sign(githubClaims(gh.issuer, { jti: undefined })) },
      { name: 'no jti on gitlab', status: 401, message: /carries no jti, which gitlab/, token: async () => gl.sign(gitlabClaims(gl.issuer, { jti: undefined })) },
      { name: 'oversize', status: 401, message: /larger than 16 KiB/, token: async () => gh.sign(githubClaims(gh.issuer, { padding: 'x'.repeat(17_000) })) },
      { name: 'unknown kid', status: 401, message: /no key of the issuer .* has the ID token's kid "never-published"/, token: async () => gh.sign(githubClaims(gh.issuer), { key: await gh.unpublishedKey('RS256', 'never-published') }) },
      { name: 'github repository of another owner (a fork)', projectName: 'octo', status: 403, message: /claim repository: expected "octo-org\/octo-repo", received "attacker\/octo-repo"; claim repository_owner_id: expected "65", received "666"; claim repository_id: expected "74", received "667"/, token: async () => gh.sign(githubClaims(gh.issuer, { repository: 'attacker/octo-repo', repository_owner_id: '666', repository_id: '667' })) },
      { name: 'github renamed repository: its name reused by another', projectName: 'octo', status: 403, message: /claim repository_id: expected "74", received "999"/, token: async () => gh.sign(githubClaims(gh.issuer, { repository_id: '999' })) },
      { name: 'github owner name reused', projectName: 'octo', status: 403, message: /claim repository_owner_id: expected "65", received "4242"/, token: async () => gh.sign(githubClaims(gh.issuer, { repository_owner_id: '4242' })) },
      { name: 'github branch not allowed', projectName: 'octo', status: 403, message: /branch: expected "main" or "release\/\*", received "feature"/, token: async () => gh.sign(githubClaims(gh.issuer, { ref: 'refs/heads/feature' })) },
      { name: 'github pull request ref', projectName: 'octo', status: 403, message: /the ref "refs\/pull\/7\/merge" names no branch or tag/, token: async () => gh.sign(githubClaims(gh.issuer, { ref: 'refs/pull/7/merge' })) },
      { name: 'github missing repository claim', projectName: 'octo', status: 403, message: /claim repository: expected "octo-org\/octo-repo", received nothing/, token: async () => gh.sign(githubClaims(gh.issuer, { repository: undefined })) },
      { name: 'project without publisher of that issuer', status: 403, message: /project "mygroup" has no trusted publisher of the issuer/, projectName: 'mygroup', token: async () => gh.sign(githubClaims(gh.issuer)) },
      { name: 'gitlab other project path', status: 403, message: /claim project_path: expected "my-group\/my-project", received "other\/my-project"/, token: async () => gl.sign(gitlabClaims(gl.issuer, { project_path: 'other/my-project' })) },
      { name: 'gitlab other project id', status: 403, message: /claim project_id: expected "20", received "21"/, token: async () => gl.sign(gitlabClaims(gl.issuer, { project_id: '21' })) },
      { name: 'gitlab branch not allowed', status: 403, message: /branch: expected "main", received "dev"/, token: async () => gl.sign(gitlabClaims(gl.issuer, { ref: 'dev' })) },
      { name: 'gitlab wrong audience', status: 401, message: /aud does not contain/, token: async () => gl.sign(gitlabClaims(gl.issuer, { aud: 'https://vault.example.com' })) },
      { name: 'jenkins other job', status: 403, message: /claim sub: expected "https:\/\/jenkins.example.com\/job\/app\/", received "https:\/\/jenkins.example.com\/job\/evil\/"/, token: async () => jk.sign(jenkinsClaims(jk.issuer, { sub: 'https://jenkins.example.com/job/evil/' })) },
      { name: 'jenkins without the branch claim', status: 403, message: /the ref null names no branch/, token: async () => jk.sign(jenkinsClaims(jk.issuer, { branch: undefined })) },
      { name: 'jenkins branch not allowed', status: 403, message: /branch: expected "main", received "feature-x"/, token: async () => jk.sign(jenkinsClaims(jk.issuer, { branch: 'feature-x' })) },
      { name: 'jenkins token of the gitlab issuer\'s key', status: 401, message: /signature does not verify|no key of the issuer/, token: async () => gl.sign(jenkinsClaims(jk.issuer)) },
      { name: 'jenkins lifetime over 1 hour', status: 401, message: /lives 3601 s/, token: async () => jk.sign(jenkinsClaims(jk.issuer, { exp: now() + 3601 })) },
    ];

    it.each(refusals.map((r) => [r.name, r] as const))('%s', async (_name, refusal) => {
      const res = await exchange(await refusal.token(), refusal.projectName);
      expect(res.status, res.text).toBe(refusal.status);
      expect(res.body._message.message).toMatch(refusal.message);
      expect(res.body._status).toBe(false);
    });

    it('counts at least 40 distinct refused tokens', () => {
      expect(new Set(refusals.map((r) => r.name)).size).toBeGreaterThanOrEqual(40);
    });

    it('a replay of an accepted token', async () => {
      const token = await gh.sign(githubClaims(gh.issuer));
      await exchangeOk(token);
      const res = await exchange(token);
      expect(res.status).toBe(401);
      expect(res.body._message.message).toBe('the ID token was exchanged already: each ID token is accepted once');
    });

    it('the discovery document of another issuer', async () => {
      const liar = await newIssuer();
      liar.discoveryIssuer = 'https://token.actions.githubusercontent.com';
      await addPublisher({ projectName: 'liar', provider: 'github', issuer: liar.issuer, claims: { repository: 'octo-org/octo-repo' } });
      const res = await exchange(await liar.sign(githubClaims(liar.issuer)), 'liar');
      expect(res.status, res.text).toBe(401);
      expect(res.body._message.message).toMatch(/openid-configuration names the issuer "https:\/\/token.actions.githubusercontent.com", not http/);
    });

    it('publishing through the token to another branch, project or repository', async () => {
      const body = await exchangeOk(await gh.sign(githubClaims(gh.issuer, { ref: 'refs/heads/release/2.x' })));
      expect(body.branch).toBe('release/2.x');
      const version = { artifact: { groupId: 'org.octo', artifactId: 'branchy', version: '2.0.0-SNAPSHOT' } };
      const other = await publish(body.token, { ...version, branch: 'main' });
      expect(other.status).toBe(403);
      expect(other.body._message.message).toBe('this token was made for branch "release/2.x" (the ref of its ID token): it may not publish to branch "main"');
      const wrongRepo = await publish(body.token, { ...version, branch: 'release/2.x', repositoryUrl: 'https://github.com/attacker/octo-repo' });
      expect(wrongRepo.status).toBe(403);
      expect(wrongRepo.body._message.message).toMatch(/made for a build of https:\/\/github.com\/octo-org\/octo-repo: it may not publish a record of repositoryUrl "https:\/\/github.com\/attacker\/octo-repo"/);
      const otherProject = await publish(body.token, { ...version, branch: 'release/2.x', projectName: 'mygroup' });
      expect(otherProject.status).toBe(403);
      expect(otherProject.body._message.message).toMatch(/may publish only to project "octo", not "mygroup"/);
      const ok = await publish(body.token, { ...version, branch: 'release/2.x', repositoryUrl: 'https://github.com/octo-org/octo-repo' });
      expect(ok.status, ok.text).toBe(201);
    });

    it('an exchanged token that expired, or was revoked', async () => {
      const expired = await exchangeOk(await gh.sign(githubClaims(gh.issuer)));
      await server.db('tokens').where({ id: expired.tokenId }).update({ expires_at: new Date(Date.now() - 1000) });
      const late = await publish(expired.token, { artifact: { groupId: 'g', artifactId: 'late', version: '1' } });
      expect(late.status).toBe(401);
      expect(late.body._message.message).toMatch(/expired at/);
      const revoked = await exchangeOk(await gh.sign(githubClaims(gh.issuer)));
      expect((await server.request('DELETE', `/v1/tokens/${revoked.tokenId}`, { token: admin })).status).toBe(204);
      const gone = await publish(revoked.token, { artifact: { groupId: 'g', artifactId: 'gone', version: '1' } });
      expect(gone.status).toBe(401);
      expect(gone.body._message.message).toMatch(/revoked at/);
    });
  });

  describe('the issuer\'s keys', () => {
    it('are cached, fetched again for an unknown kid at most once per 30 s, and follow a rotation', async () => {
      const issuer = await newIssuer();
      await addPublisher({ projectName: 'rotating', provider: 'github', issuer: issuer.issuer, claims: { repository: 'octo-org/octo-repo' } });
      await exchangeOk(await issuer.sign(githubClaims(issuer.issuer)), 'rotating');
      await exchangeOk(await issuer.sign(githubClaims(issuer.issuer)), 'rotating');
      expect(issuer.jwksFetches()).toBe(1);
      // The issuer rotates: a token of the new key makes one fetch, which finds it.
      const oldToken = await issuer.sign(githubClaims(issuer.issuer));
      // 31 s later, as far as the cache can tell.
      const cache = keyCacheOf({ config: server.config } as Services);
      cache.entries.get(issuer.issuer)!.fetchedAt -= 31_000;
      const next = await issuer.rotate({ dropOld: true });
      await exchangeOk(await issuer.sign(githubClaims(issuer.issuer), { key: next }), 'rotating');
      expect(issuer.jwksFetches()).toBe(2);
      // An unknown kid right after: no fetch within 30 s, and refused.
      for (const kid of ['unknown-1', 'unknown-2']) {
        const res = await exchange(await issuer.sign(githubClaims(issuer.issuer), { key: await issuer.unpublishedKey('RS256', kid) }), 'rotating');
        expect(res.status).toBe(401);
        expect(res.body._message.message).toMatch(new RegExp(`kid "${kid}"`));
      }
      expect(issuer.jwksFetches()).toBe(2);
      // The old key was dropped at the rotation.
      const old = await exchange(oldToken, 'rotating');
      expect(old.status).toBe(401);
      expect(old.body._message.message).toMatch(/no key of the issuer .* has the ID token's kid/);
    });

    it.each(['reset', 'error500', 'garbage'] as const)('an issuer that is %s: 503 with Retry-After', async (mode) => {
      const issuer = await newIssuer();
      await addPublisher({ projectName: `down-${mode}`, provider: 'github', issuer: issuer.issuer, claims: { repository: 'octo-org/octo-repo' } });
      const token = await issuer.sign(githubClaims(issuer.issuer));
      issuer.mode = mode;
      const res = await exchange(token, `down-${mode}`);
      expect(res.status, res.text).toBe(503);
      expect(res.headers.get('retry-after')).toBe('30');
      expect(res.body._message.message).toMatch(new RegExp(`issuer ${issuer.issuer.replace(/[.]/g, '\\.')} cannot be used now`));
      // Once it answers again, the same token is accepted: a 503 does not use it up.
      issuer.mode = 'ok';
      expect((await exchange(token, `down-${mode}`)).status).toBe(200);
    });

    it('an issuer that does not answer: 503 after the fetch timeout', async () => {
      const issuer = await newIssuer();
      await addPublisher({ projectName: 'slow', provider: 'github', issuer: issuer.issuer, claims: { repository: 'octo-org/octo-repo' } });
      issuer.mode = 'slow';
      const res = await exchange(await issuer.sign(githubClaims(issuer.issuer)), 'slow');
      expect(res.status).toBe(503);
      expect(res.body._message.message).toMatch(/did not answer within 5 s/);
      expect(server.logs.filter((l) => /"status":500\b/.test(l))).toEqual([]);
    }, 60_000);
  });
});
