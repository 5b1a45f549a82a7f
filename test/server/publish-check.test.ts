// Publishing with a credential (services/versions.ts publish, server/policy/publish.ts): the
// database checks the credential where it writes (in the publish statement on PostgreSQL and
// PGlite, by a lookup before the write on MariaDB and MySQL); each rule of the auth path holds
// there too, a refused credential writes nothing, and the refusal is the auth path's 401 or 403.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../common/errors.js';
import { VersionRecord } from '../../common/schemas/repositories.js';
import { hashProjectToken } from '../../server/auth/project-tokens.js';
import type { Services } from '../../server/services/context.js';
import type { SignedCredential } from '../../server/services/context.js';
import { publish } from '../../server/services/versions.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('a publish checked in its own statement on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let services: Services;
  let version = 0;
  const now = new Date();
  const PUBLISHED = 'published';

  const record = (projectName: string) =>
    VersionRecord.parse({ projectName, branch: 'main', artifact: { groupId: 'check', artifactId: 'lib', version: `1.0.${++version}` }, latestVersion: true });
  const stored = async (r: VersionRecord) => server.db('versions').where({ group_id: 'check', version: r.artifact.version });
  const session = (token: string): SignedCredential => {
    // The server checked its signature when the request came in; here only its claims are read.
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
    return { kind: 'session', userId: claims.uid, username: claims.sub, tokenVersion: claims.tv };
  };
  const login = async (username: string) =>
    (await server.request('POST', '/v1/authentication/generate-token', { body: { username, password: `${username}-secret` } })).body.token as string;
  const makeUser = async (username: string, projectName: string) => {
    const created = await server.request('POST', '/v1/users', { token: admin, body: { username, password: `${username}-secret`, projectName, role: 'ROLE_USER' } });
    expect(created.status, created.text).toBe(201);
    return created.body.userId as string;
  };
  const makeToken = async (userId: string, name: string, scope: 'publish' | 'read', used: Date | null, expiresAt: Date | null = null) => {
    const res = await server.request('POST', '/v1/tokens', { token: admin, body: { name, scope, userId } });
    expect(res.status, res.text).toBe(201);
    await server.db('tokens').where({ id: res.body.id }).update({ last_used_at: used, expires_at: expiresAt });
    return { kind: 'project', tokenHash: hashProjectToken(res.body.token) } as SignedCredential;
  };

  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
    services = { db: server.db, config: server.config, now: () => now } as Services;
  });
  afterAll(() => server?.close());

  /** Publishes with the credential: 'published', or the refusal's code and message; nothing is stored when refused. */
  async function attempt(credential: SignedCredential, projectName: string): Promise<string> {
    const r = record(projectName);
    const result = await publish(services, credential, r).catch((error: unknown) => error);
    const rows = await stored(r);
    if (result instanceof AppError) {
      expect(rows).toEqual([]);
      return `${result.code}: ${result.message}`;
    }
    expect(rows).toHaveLength(1);
    expect(result).toEqual({ _status: true, uid: rows[0].uid, created: true });
    return PUBLISHED;
  }

  const notMyProject = (user: string, mine: string, other: string) => `forbidden: user ${user} may publish only to project "${mine}", not "${other}"`;

  it('takes a session token of a user of the project, or of an administrator for any project', async () => {
    const userId = await makeUser('check-user', 'alpha');
    const token = session(await login('check-user'));
    expect(await attempt(token, 'alpha')).toBe(PUBLISHED);
    expect(await attempt(token, 'beta')).toBe(notMyProject('check-user', 'alpha', 'beta'));
    expect(await attempt(session(admin), 'beta')).toBe(PUBLISHED);
    // The earlier latest record of each key is latest no more.
    const latest = await server.db('versions').where({ group_id: 'check', latest_version: true }).orderBy('project_name');
    expect(latest.map((r) => [r.project_name, r.version])).toEqual([['alpha', '1.0.1'], ['beta', '1.0.3']]);
    await server.db('users').where({ id: userId }).update({ role: 'ROLE_ADMIN' });
    expect(await attempt(token, 'beta')).toBe(PUBLISHED);
  });

  it('refuses a session token whose user changed: version, name, password to change, deleted', async () => {
    const userId = await makeUser('check-changing', 'alpha');
    const token = session(await login('check-changing'));
    await server.db('users').where({ id: userId }).update({ token_version: 1 });
    expect(await attempt(token, 'alpha')).toBe('unauthorized: the token was revoked (the password changed since): get a new one');
    await server.db('users').where({ id: userId }).update({ token_version: 0, username: 'check-renamed' });
    expect(await attempt(token, 'alpha')).toBe('unauthorized: the token belongs to a user that no longer exists');
    await server.db('users').where({ id: userId }).update({ username: 'check-changing', must_change_password: true });
    expect(await attempt(token, 'alpha')).toBe(
      `forbidden: user check-changing must change the initial password first: PUT /v1/users/${userId}/password with {"password": "..."} (or: repoadmin user passwd)`,
    );
    await server.db('users').where({ id: userId }).update({ must_change_password: false });
    expect(await attempt(token, 'alpha')).toBe(PUBLISHED);
    await server.db('users').where({ id: userId }).delete();
    expect(await attempt(token, 'alpha')).toBe('unauthorized: the token belongs to a user that no longer exists');
  });

  it("takes a project token of the scope publish, unexpired, for its user's project, and records its use when due", async () => {
    const userId = await makeUser('check-ci', 'gamma');
    const minuteAgo = new Date(now.getTime() - 60_000);
    const fresh = new Date(now.getTime() - 59_000);
    const lastUse = async (name: string) => (await server.db('tokens').where({ name }).first()).last_used_at as Date | null;
    expect(await attempt(await makeToken(userId, 'fresh', 'publish', fresh), 'gamma')).toBe(PUBLISHED);
    expect((await lastUse('fresh'))?.getTime()).toBe(fresh.getTime());
    expect(await attempt(await makeToken(userId, 'other-project', 'publish', fresh), 'delta')).toBe(notMyProject('check-ci', 'gamma', 'delta'));
    expect(await attempt(await makeToken(userId, 'read', 'read', fresh), 'gamma')).toBe(
      'forbidden: the project token "read" has the scope read: publishing needs a token with the scope publish',
    );
    // Its last use is due to be recorded: the publish records it and goes ahead.
    expect(await attempt(await makeToken(userId, 'due', 'publish', minuteAgo), 'gamma')).toBe(PUBLISHED);
    expect((await lastUse('due'))?.getTime()).toBe(now.getTime());
    expect(await attempt(await makeToken(userId, 'never-used', 'publish', null), 'gamma')).toBe(PUBLISHED);
    expect((await lastUse('never-used'))?.getTime()).toBe(now.getTime());
    // A refused publish records the use too, as the auth path does.
    expect(await attempt(await makeToken(userId, 'due-elsewhere', 'publish', minuteAgo), 'delta')).toBe(notMyProject('check-ci', 'gamma', 'delta'));
    expect((await lastUse('due-elsewhere'))?.getTime()).toBe(now.getTime());
    // Expiry: at the instant itself and 5 s before, refused (and no use recorded); 1 ms later, taken.
    for (const at of [now, new Date(now.getTime() - 5_000)]) {
      await server.db('tokens').where({ name: 'expired' }).delete();
      const refused = await attempt(await makeToken(userId, 'expired', 'publish', minuteAgo, at), 'gamma');
      expect(refused).toMatch(/^unauthorized: the project token "expired" expired at \S+: make a new one$/);
      expect((await lastUse('expired'))?.getTime()).toBe(minuteAgo.getTime());
    }
    expect(await attempt(await makeToken(userId, 'expires-later', 'publish', fresh, new Date(now.getTime() + 1)), 'gamma')).toBe(PUBLISHED);
    expect(await attempt({ kind: 'project', tokenHash: hashProjectToken('rpa_unknown') }, 'gamma')).toBe(
      'unauthorized: the project token is not known to this server (never made here, or mistyped)',
    );
    await server.db('users').where({ id: userId }).update({ must_change_password: true });
    expect(await attempt(await makeToken(userId, 'gated', 'publish', fresh), 'gamma')).toMatch(/^forbidden: user check-ci must change the initial password first/);
  });

  // Caught mutation (policy/publish.ts checkMayPublish): `actor.projectName ?? ''` made `?? "Stryker was here!"`.
  it('refuses a user of no project, saying it has none', async () => {
    const userId = await makeUser('check-homeless', 'zeta');
    const token = session(await login('check-homeless'));
    await server.db('users').where({ id: userId }).update({ project_name: null });
    expect(await attempt(token, 'zeta')).toBe(notMyProject('check-homeless', '', 'zeta'));
  });

  // Caught mutations (services/versions.ts publish): `attempt < 2` made `attempt <= 2` (a third try
  // publishes), and the 503's message made "".
  it('gives up with a 503 when the database refuses twice what the auth path then allows, writing nothing', async () => {
    const userId = await makeUser('check-flip', 'epsilon');
    const expiresAt = new Date(now.getTime() + 60_000);
    const credential = await makeToken(userId, 'flip', 'publish', now, expiresAt);
    // The clock reads, in turn: the precondition's (at the expiry: refused), the explanation's (before
    // it: allowed), the same again, then a third precondition's (before it: it would publish).
    const reads = [expiresAt, now, expiresAt, now, now];
    let read = 0;
    const flipping = { ...services, now: () => reads[Math.min(read++, reads.length - 1)]! } as Services;
    const r = record('epsilon');
    const result = await publish(flipping, credential, { ...r, creationDate: now }).catch((error: unknown) => error);
    expect(result).toBeInstanceOf(AppError);
    expect(result).toMatchObject({ code: 'unavailable', message: 'the publishing user or token changed during the publish: try again' });
    expect(read).toBe(4);
    expect(await stored(r)).toEqual([]);
  });
});
