// Trusted publishing end to end: the built CLI in a simulated GitHub Actions step (its two ID token
// request variables pointing at a stand-in of GitHub's token service, no other credentials) against
// the real server, which verifies the ID token with the stand-in issuer's keys.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ActionsIssuer, DEFAULT_JOB, startActionsIssuer } from '../helpers/actions-issuer.js';
import { gitlabClaims, jenkinsClaims, startIssuer, type TestIssuer } from '../helpers/oidc-issuer.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import { assertBuilt, freshHome, run } from './run.js';

let server: TestServer;
let actions: ActionsIssuer;
let adminHome: string;
let publisherId: string;

/** The variables of a GitHub Actions job with `permissions: id-token: write`, and nothing else to log in with. */
const actionsStep = (extra: Record<string, string> = {}) => ({
  REPOADMIN_URL: server.url,
  CI: 'true',
  GITHUB_ACTIONS: 'true',
  ACTIONS_ID_TOKEN_REQUEST_URL: actions.requestUrl,
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: actions.requestToken,
  GITHUB_SERVER_URL: 'https://github.com',
  GITHUB_REPOSITORY: DEFAULT_JOB.repository,
  GITHUB_REF_NAME: 'main',
  ...extra,
});

beforeAll(async () => {
  assertBuilt();
  actions = await startActionsIssuer();
  server = await startTestServer({ config: { oidc: { audience: 'registry.test', tokenMinutes: 15, allowNetworks: ['127.0.0.0/8'] } } });
  adminHome = await freshHome();
  const login = await run(['login', '--url', server.url, '--username', 'admin', '--password-stdin'], { home: adminHome, stdin: ADMIN_PASSWORD });
  expect(login.code).toBe(0);
  // The administrator's side, through the command as documented.
  const added = await run(
    [
      'trust', 'add', '--project', 'shop', '--provider', 'github', '--issuer', actions.issuer,
      '--claim', `repository=${DEFAULT_JOB.repository}`, '--claim', `repository_owner_id=${DEFAULT_JOB.ownerId}`,
      '--branch', 'main', '--json',
    ],
    { home: adminHome },
  );
  expect(added.stderr).toContain('Their audience (aud) must be registry.test.');
  expect(added.code).toBe(0);
  publisherId = JSON.parse(added.stdout).id;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await actions?.close();
});

describe('repoadmin in a GitHub Actions step', () => {
  it('publishes with no stored secret: the ID token of the server\'s audience is exchanged, and the record carries its provenance', async () => {
    const home = await freshHome();
    actions.job = {};
    const published = await run(['publish', '--group', 'com.acme', '--artifact', 'shop', '--version', '1.4.0', '--latest', '--verbose'], { home, env: actionsStep() });
    expect(published.stderr).toContain('Created com.acme:shop:1.4.0 (project shop, branch main, marked latest).');
    expect(published.code).toBe(0);
    // The ID token was asked for the server's audience, with the job's request token.
    expect(actions.requests.at(-1)).toEqual({ audience: 'registry.test', authorized: true });
    // --verbose names the publisher that matched; no token is ever shown whole.
    expect(published.stderr).toContain(`trusted publisher ${publisherId} matched: a token for project shop, branch main`);
    const exchanged = await server.db('tokens').where({ publisher_id: publisherId }).select('*');
    expect(exchanged.length).toBeGreaterThan(0);
    expect(published.stderr).not.toMatch(/rpa_[A-Za-z0-9_-]{43}/);
    expect(published.stderr).not.toContain(actions.requestToken);
    expect(published.stderr).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}\./);
    // Kept in memory only: the step left nothing behind.
    expect(await readdir(home)).toEqual([]);
    // Nothing asked who the user is: the exchanged token has none.
    expect(server.logs.filter((line) => line.includes('/v1/users/me'))).toEqual([]);

    const uid = published.stdout.trim();
    const record = await server.request('GET', `/v1/repositories/${uid}`);
    expect(record.status).toBe(200);
    expect(record.body.provenance).toMatchObject({
      issuer: actions.issuer,
      subject: `repo:${DEFAULT_JOB.repository}:ref:refs/heads/main`,
      repository: DEFAULT_JOB.repository,
      repositoryId: DEFAULT_JOB.repositoryId,
      ref: 'refs/heads/main',
      sha: DEFAULT_JOB.sha,
      runId: DEFAULT_JOB.runId,
      runUrl: `https://github.com/${DEFAULT_JOB.repository}/actions/runs/${DEFAULT_JOB.runId}`,
      publisherId,
    });

    // search --verified finds it, with the run that built it.
    const verified = await run(['search', '--group', 'com.acme', '--verified', '--json'], { home, env: { REPOADMIN_URL: server.url } });
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout).versionInformation.map((r: { uid: string }) => r.uid)).toEqual([uid]);
    const table = await run(['search', '--group', 'com.acme', '--verified'], { home, env: { REPOADMIN_URL: server.url } });
    expect(table.stdout).toContain(`https://github.com/${DEFAULT_JOB.repository}/actions/runs/${DEFAULT_JOB.runId}`);
  });

  it("a refused exchange exits 4 with the server's message naming the claim that differed, and publishes nothing", async () => {
    const home = await freshHome();
    actions.job = { repository: 'mallory/shop' };
    try {
      const refused = await run(['publish', '--group', 'com.acme', '--artifact', 'shop', '--version', '6.6.6'], {
        home,
        env: actionsStep({ GITHUB_REPOSITORY: 'mallory/shop' }),
      });
      expect(refused.code).toBe(4);
      expect(refused.stderr).toMatch(/^error: the ID token of GitHub Actions was refused: .*repository/m);
      expect(refused.stderr).toContain('acme/shop');
      expect(refused.stderr).toContain('mallory/shop');
      expect(refused.stdout).toBe('');
      expect(await server.db('versions').where({ version: '6.6.6' }).first()).toBeUndefined();
    } finally {
      actions.job = {};
    }
  });

  it('a feature branch\'s step gets no token for a publisher of main (exit 4)', async () => {
    const home = await freshHome();
    actions.job = { ref: 'refs/heads/feature/x' };
    try {
      const refused = await run(['publish', '--group', 'com.acme', '--artifact', 'shop', '--version', '1.5.0', '--latest'], {
        home,
        env: actionsStep({ GITHUB_REF_NAME: 'feature/x' }),
      });
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain('feature/x');
      expect(await server.db('versions').where({ version: '1.5.0' }).first()).toBeUndefined();
    } finally {
      actions.job = {};
    }
  });

  it('with REPOADMIN_ID_TOKEN (GitLab, Jenkins, any CI) the token is exchanged as given; whoami shows the publisher, not a user', async () => {
    const home = await freshHome();
    const idToken = await actions.sign('registry.test');
    const who = await run(['whoami', '--json'], { home, env: { REPOADMIN_URL: server.url, REPOADMIN_ID_TOKEN: idToken } });
    expect(who.stderr).toBe('');
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ username: null, projectName: 'shop', branch: 'main', publisherId });
    // The ID token is accepted once: the same one again is a replay.
    const replay = await run(['whoami'], { home, env: { REPOADMIN_URL: server.url, REPOADMIN_ID_TOKEN: idToken } });
    expect(replay.code).toBe(4);
    expect(replay.stderr).toMatch(/^error: the ID token of REPOADMIN_ID_TOKEN was refused: /m);
  });
});

describe('repoadmin with REPOADMIN_ID_TOKEN in GitLab CI and Jenkins', () => {
  let gitlab: TestIssuer;
  let jenkins: TestIssuer;
  beforeAll(async () => {
    [gitlab, jenkins] = await Promise.all([startIssuer(), startIssuer({ path: '/oidc' })]);
    const trust = async (args: string[]) => {
      const added = await run(['trust', 'add', '--project', 'ops', ...args], { home: adminHome });
      expect(added.stderr).toContain('Trusted');
      expect(added.code).toBe(0);
    };
    await trust(['--provider', 'gitlab', '--issuer', gitlab.issuer, '--claim', 'project_path=my-group/my-project', '--claim', 'ref_protected=true', '--branch', 'main']);
    await trust(['--provider', 'jenkins', '--issuer', jenkins.issuer, '--ref-claim', 'branch', '--claim', 'sub=https://jenkins.example.com/job/app/', '--branch', 'main']);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([gitlab?.close(), jenkins?.close()]);
  });

  it("GitLab's id_tokens variable: publishes with the pipeline as provenance", async () => {
    const idToken = await gitlab.sign(gitlabClaims(gitlab.issuer, { aud: 'registry.test' }));
    const env = { REPOADMIN_URL: server.url, CI: 'true', REPOADMIN_ID_TOKEN: idToken, CI_COMMIT_REF_NAME: 'main', CI_PROJECT_URL: `${gitlab.issuer}/my-group/my-project` };
    const published = await run(['publish', '--group', 'com.acme', '--artifact', 'ops-gitlab', '--version', '3.0.0', '--latest'], { home: await freshHome(), env });
    expect(published.stderr).toContain('(project ops, branch main, marked latest)');
    expect(published.code).toBe(0);
    const record = await server.request('GET', `/v1/repositories/${published.stdout.trim()}`);
    expect(record.body.provenance).toMatchObject({ repository: 'my-group/my-project', repositoryId: '20', runId: '574', runUrl: `${gitlab.issuer}/my-group/my-project/-/pipelines/574` });
  });

  it("Jenkins' credentials binding: publishes with the build as provenance; another job is refused (exit 4)", async () => {
    const env = (claims: Record<string, unknown>) =>
      jenkins.sign(jenkinsClaims(jenkins.issuer, { aud: 'registry.test', build_number: 77, ...claims })).then((idToken) => ({
        REPOADMIN_URL: server.url,
        REPOADMIN_ID_TOKEN: idToken,
        BRANCH_NAME: 'main',
      }));
    const published = await run(['publish', '--group', 'com.acme', '--artifact', 'ops-jenkins', '--version', '3.0.0'], { home: await freshHome(), env: await env({}) });
    expect(published.code).toBe(0);
    const record = await server.request('GET', `/v1/repositories/${published.stdout.trim()}`);
    expect(record.body.provenance).toMatchObject({ subject: 'https://jenkins.example.com/job/app/', runUrl: 'https://jenkins.example.com/job/app/77/' });

    const other = await run(['publish', '--group', 'com.acme', '--artifact', 'ops-jenkins', '--version', '3.0.1'], {
      home: await freshHome(),
      env: await env({ sub: 'https://jenkins.example.com/job/other/' }),
    });
    expect(other.code).toBe(4);
    expect(other.stderr).toMatch(/^error: the ID token of REPOADMIN_ID_TOKEN was refused: .*sub/m);
    expect(other.stderr).toContain('https://jenkins.example.com/job/other/');
  });
});

describe('repoadmin trust', () => {
  it('lists the publishers and removes one, which stops its exchanges', async () => {
    const listed = await run(['trust', 'list', '--project', 'shop'], { home: adminHome });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${publisherId}\tshop\tgithub\t${actions.issuer}\trepository=${DEFAULT_JOB.repository} repository_owner_id=${DEFAULT_JOB.ownerId}\tmain\t`);

    const removed = await run(['trust', 'remove', publisherId], { home: adminHome });
    expect(removed.stderr + removed.stdout).toContain('Removed the trusted publisher');
    expect(removed.code).toBe(0);
    const again = await run(['trust', 'remove', publisherId], { home: adminHome });
    expect(again.code).toBe(3);

    const refused = await run(['publish', '--group', 'com.acme', '--artifact', 'shop', '--version', '1.4.1'], { home: await freshHome(), env: actionsStep() });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/^error: the ID token of GitHub Actions was refused: /m);
  });
});
