// The publish that checks its credential in its own statement (services/versions.ts publishChecked,
// dialects/postgres.ts): each rule of the separate lookup holds there too, and a credential that
// fails writes nothing and takes no lock. MariaDB and MySQL have no such statement: always undefined.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VersionRecord } from '../../common/schemas/repositories.js';
import { hashProjectToken } from '../../server/auth/project-tokens.js';
import type { Services } from '../../server/services/context.js';
import type { SignedCredential } from '../../server/services/access.js';
import { publishChecked } from '../../server/services/versions.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('a publish checked in its own statement on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let services: Services;
  let version = 0;
  const now = new Date();
  /** What a credential that holds gets: on MariaDB and MySQL, always the usual way. */
  const PUBLISHED = kind === 'mysql' ? 'usual way' : 'published';

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
    services = { db: server.db, now: () => now } as Services;
  });
  afterAll(() => server?.close());

  /** Publishes with the credential: the answer when the database took it, else undefined and nothing stored. */
  async function attempt(credential: SignedCredential, projectName: string) {
    const r = record(projectName);
    const result = await publishChecked(services, credential, r);
    const rows = await stored(r);
    if (kind === 'mysql') {
      expect(result).toBeUndefined();
      expect(rows).toEqual([]);
      return 'usual way';
    }
    expect(rows).toHaveLength(result ? 1 : 0);
    if (result) expect(result).toEqual({ _status: true, uid: rows[0].uid, created: true });
    return result ? 'published' : 'usual way';
  }

  it('takes a session token of a user of the project, or of an administrator for any project', async () => {
    const userId = await makeUser('check-user', 'alpha');
    const token = session(await login('check-user'));
    expect(await attempt(token, 'alpha')).toBe(PUBLISHED);
    expect(await attempt(token, 'beta')).toBe('usual way');
    expect(await attempt(session(admin), 'beta')).toBe(PUBLISHED);
    // The earlier latest record of each key is latest no more.
    if (kind !== 'mysql') {
      const latest = await server.db('versions').where({ group_id: 'check', latest_version: true }).orderBy('project_name');
      expect(latest.map((r) => [r.project_name, r.version])).toEqual([['alpha', '1.0.1'], ['beta', '1.0.3']]);
    }
    await server.db('users').where({ id: userId }).update({ role: 'ROLE_ADMIN' });
    expect(await attempt(token, 'beta')).toBe(PUBLISHED);
  });

  it('refuses a session token whose user changed: version, name, password to change, deleted', async () => {
    const userId = await makeUser('check-changing', 'alpha');
    const token = session(await login('check-changing'));
    await server.db('users').where({ id: userId }).update({ token_version: 1 });
    expect(await attempt(token, 'alpha')).toBe('usual way');
    await server.db('users').where({ id: userId }).update({ token_version: 0, username: 'check-renamed' });
    expect(await attempt(token, 'alpha')).toBe('usual way');
    await server.db('users').where({ id: userId }).update({ username: 'check-changing', must_change_password: true });
    expect(await attempt(token, 'alpha')).toBe('usual way');
    await server.db('users').where({ id: userId }).update({ must_change_password: false });
    expect(await attempt(token, 'alpha')).toBe(PUBLISHED);
    await server.db('users').where({ id: userId }).delete();
    expect(await attempt(token, 'alpha')).toBe('usual way');
  });

  it('takes a project token of the scope publish, unexpired, used within the minute, for its user\'s project', async () => {
    const userId = await makeUser('check-ci', 'gamma');
    const minuteAgo = new Date(now.getTime() - 60_000);
    const fresh = new Date(now.getTime() - 59_000);
    expect(await attempt(await makeToken(userId, 'fresh', 'publish', fresh), 'gamma')).toBe(PUBLISHED);
    expect(await attempt(await makeToken(userId, 'other-project', 'publish', fresh), 'delta')).toBe('usual way');
    expect(await attempt(await makeToken(userId, 'read', 'read', fresh), 'gamma')).toBe('usual way');
    // Its last use is due to be recorded: the usual way records it.
    expect(await attempt(await makeToken(userId, 'due', 'publish', minuteAgo), 'gamma')).toBe('usual way');
    expect(await attempt(await makeToken(userId, 'never-used', 'publish', null), 'gamma')).toBe('usual way');
    expect(await attempt(await makeToken(userId, 'expired', 'publish', fresh, now), 'gamma')).toBe('usual way');
    expect(await attempt(await makeToken(userId, 'expires-later', 'publish', fresh, new Date(now.getTime() + 1)), 'gamma')).toBe(PUBLISHED);
    expect(await attempt({ kind: 'project', tokenHash: hashProjectToken('rpa_unknown') }, 'gamma')).toBe('usual way');
    await server.db('users').where({ id: userId }).update({ must_change_password: true });
    expect(await attempt(await makeToken(userId, 'gated', 'publish', fresh), 'gamma')).toBe('usual way');
  });
});
