// The publish of a version row (upsertVersion, and on PostgreSQL and PGlite the one statement of
// dialects/postgres.ts publishStatement) on each kind: insert or replace by coordinates, the latest
// rule it carries (one latest record per project, group, artifact and branch), a precondition
// that refuses, and the audit entry written with the record. The server tests publish with a credential only; the benchmark publishes without.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, openMigratedDatabase } from '../../test/helpers/db.js';
import { oidcPublishPrecondition, publishPrecondition } from '../policy/publish.js';
import type { AuditEntry } from './audit.js';
import type { Database } from './connect.js';
import { insertToken } from './tokens.js';
import { insertUser } from './users.js';
import { type VersionFields, upsertVersion } from './versions.js';

describe.each(dbKinds())('publishing a version row on %s', (kind) => {
  let opened: Database;
  let db: Knex;

  beforeAll(async () => {
    opened = await openMigratedDatabase(kind);
    db = opened.db;
  });
  afterAll(() => opened?.close());

  const fields = (over: Partial<VersionFields> = {}): VersionFields => ({
    projectName: 'p', branch: 'main', groupId: 'g', artifactId: 'a', version: '1.0.0', repositoryUrl: null,
    creationDate: new Date('2026-01-02T03:04:05.678Z'), type: 'LIBRARY', latestVersion: false, description: null, ...over,
  });
  const latestOf = async (groupId: string) =>
    (await db('versions').where({ group_id: groupId, latest_version: true }).orderBy(['project_name', 'artifact_id', 'branch']))
      .map((r: Record<string, unknown>) => `${r.project_name}/${r.group_id}/${r.artifact_id}/${r.branch}/${r.version}`);

  it('inserts a record, then replaces the one of the same coordinates keeping its uid', async () => {
    const first = await upsertVersion(db, fields({ groupId: 'replace', description: 'one' }));
    expect(first).toEqual({ uid: expect.any(String), created: true });
    const again = await upsertVersion(db, fields({ groupId: 'replace', description: 'two', type: 'APPLICATION', repositoryUrl: 'https://r.test/a' }));
    expect(again).toEqual({ uid: first!.uid, created: false });
    const rows = await db('versions').where({ group_id: 'replace' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ uid: first!.uid, description: 'two', type: 'APPLICATION', repository_url: 'https://r.test/a', version: '1.0.0' });
  });

  it('keeps one latest record per project, group, artifact and branch: a latest publish clears only its own key', async () => {
    const latest = (over: Partial<VersionFields>) => upsertVersion(db, fields({ groupId: 'keys', latestVersion: true, ...over }));
    await latest({ version: '1.0.0' });
    await latest({ version: '1.0.0', branch: 'develop' });
    await latest({ version: '1.0.0', projectName: 'q' });
    await latest({ version: '1.0.0', artifactId: 'b' });
    await latest({ version: '1.0.0', groupId: 'keys-other' });
    await latest({ version: '2.0.0' });
    expect(await latestOf('keys')).toEqual(['p/keys/a/develop/1.0.0', 'p/keys/a/main/2.0.0', 'p/keys/b/main/1.0.0', 'q/keys/a/main/1.0.0']);
    expect(await latestOf('keys-other')).toEqual(['p/keys-other/a/main/1.0.0']);
    // A record that is not latest leaves the key's latest as it is; republished as latest, it moves back.
    await upsertVersion(db, fields({ groupId: 'keys', version: '3.0.0' }));
    expect(await latestOf('keys')).toContain('p/keys/a/main/2.0.0');
    await latest({ version: '1.0.0' });
    expect(await latestOf('keys')).toContain('p/keys/a/main/1.0.0');
    expect(await db('versions').where({ group_id: 'keys', branch: 'main', project_name: 'p', artifact_id: 'a' }).orderBy('version').pluck('latest_version')).toEqual(
      kind === 'mysql' ? [1, 0, 0] : [true, false, false],
    );
  });

  // Caught mutation (postgres.ts publishSql): `precondition ? ' from allowed' : ''` made `''`, which
  // takes the key and writes whatever the check yields.
  it('writes nothing when the precondition yields no row, and the same record publishes without one', async () => {
    const nobody = publishPrecondition({ kind: 'session', userId: randomUUID(), username: 'nobody', tokenVersion: 0 }, 'p', new Date());
    expect(await upsertVersion(db, fields({ groupId: 'checked' }), nobody)).toBeUndefined();
    expect(await db('versions').where({ group_id: 'checked' })).toEqual([]);
    expect(await upsertVersion(db, fields({ groupId: 'checked' }))).toMatchObject({ created: true });
    expect(await upsertVersion(db, fields({ groupId: 'checked', version: '1.0.1' }), nobody)).toBeUndefined();
    expect(await db('versions').where({ group_id: 'checked' }).pluck('version')).toEqual(['1.0.0']);
  });

  const entry = (target: string, via: 'token' | 'session' = 'token'): AuditEntry => ({ via, action: 'version.published', target, outcome: 'ok', address: '192.0.2.7', requestId: `request-${target}` });
  const entriesOf = (target: string) => db('audit').where({ target }).select('user_id', 'username', 'token_id', 'via', 'action', 'outcome', 'address', 'request_id', 'details');

  // The audit entry of a publish is written with the record, and names whom the precondition found.
  it("writes the request's audit entry with the record: the token's user and the token, or a session's user; none when refused", async () => {
    const userId = await insertUser(db, { username: 'named', passwordHash: 'x', projectName: 'p', role: 'ROLE_USER' });
    const tokenId = randomUUID();
    await insertToken(db, { id: tokenId, userId, name: 'ci', scope: 'publish', tokenHash: 'hash-of-named', createdAt: new Date(), expiresAt: null });
    const byToken = publishPrecondition({ kind: 'project', tokenHash: 'hash-of-named' }, 'p', new Date());
    expect(await upsertVersion(db, fields({ groupId: 'named' }), byToken, undefined, entry('named-token'))).toEqual({ uid: expect.any(String), created: true });
    const written = { action: 'version.published', outcome: 'ok', address: '192.0.2.7', details: null };
    expect(await entriesOf('named-token')).toEqual([{ ...written, user_id: userId, username: 'named', token_id: tokenId, via: 'token', request_id: 'request-named-token' }]);
    // A replaced record (a latest one, which takes the key's lock) has its entry too.
    const bySession = publishPrecondition({ kind: 'session', userId, username: 'named', tokenVersion: 0 }, 'p', new Date());
    expect(await upsertVersion(db, fields({ groupId: 'named', latestVersion: true }), bySession, undefined, entry('named-session', 'session'))).toEqual({ uid: expect.any(String), created: false });
    expect(await entriesOf('named-session')).toEqual([{ ...written, user_id: userId, username: 'named', token_id: null, via: 'session', request_id: 'request-named-session' }]);
    const nobody = publishPrecondition({ kind: 'session', userId: randomUUID(), username: 'nobody', tokenVersion: 0 }, 'p', new Date());
    expect(await upsertVersion(db, fields({ groupId: 'named', version: '2.0.0' }), nobody, undefined, entry('named-refused'))).toBeUndefined();
    expect(await entriesOf('named-refused')).toEqual([]);
  });

  // One step: an entry the database refuses takes the record with it, on each path of each kind.
  it('stores no record whose audit entry cannot be written', async () => {
    const userId = await insertUser(db, { username: 'atomic', passwordHash: 'x', projectName: 'p', role: 'ROLE_USER' });
    const bySession = publishPrecondition({ kind: 'session', userId, username: 'atomic', tokenVersion: 0 }, 'p', new Date());
    // The action column holds 40 characters.
    const refused = { ...entry('atomic', 'session'), action: 'x'.repeat(41) };
    for (const latestVersion of [false, true]) {
      await expect(upsertVersion(db, fields({ groupId: 'atomic', latestVersion }), bySession, undefined, refused)).rejects.toThrow();
    }
    expect(await db('versions').where({ group_id: 'atomic' })).toEqual([]);
    expect(await upsertVersion(db, fields({ groupId: 'atomic', latestVersion: true }), bySession, undefined, entry('atomic', 'session'))).toMatchObject({ created: true });
    expect(await db('versions').where({ group_id: 'atomic' }).pluck('version')).toEqual(['1.0.0']);
  });

  it("cuts an entry's target, address and request id to their columns, and stores those it lacks as null", async () => {
    const userId = await insertUser(db, { username: 'cut', passwordHash: 'x', projectName: 'p', role: 'ROLE_USER' });
    const bySession = publishPrecondition({ kind: 'session', userId, username: 'cut', tokenVersion: 0 }, 'p', new Date());
    const long = { via: 'session', action: 'version.published', target: `cut-${'t'.repeat(600)}`, outcome: 'ok', address: 'a'.repeat(150), requestId: 'r'.repeat(150) } as const;
    await upsertVersion(db, fields({ groupId: 'cut' }), bySession, undefined, long);
    expect(await db('audit').where({ username: 'cut' }).select('target', 'address', 'request_id')).toEqual([
      { target: long.target.slice(0, 500), address: 'a'.repeat(100), request_id: 'r'.repeat(100) },
    ]);
    await upsertVersion(db, fields({ groupId: 'cut', version: '2.0.0' }), bySession, undefined, { action: 'version.published', outcome: 'ok' });
    expect(await db('audit').where({ username: 'cut' }).whereNull('target').select('via', 'target', 'address', 'request_id', 'details')).toEqual([
      { via: null, target: null, address: null, request_id: null, details: null },
    ]);
  });

  it('refuses an audit entry without a precondition to name its actor', async () => {
    expect(() => upsertVersion(db, fields({ groupId: 'unnamed' }), undefined, undefined, entry('unnamed'))).toThrow(/precondition/);
  });

  // The second statement of a publish through an exchanged token (services/versions.ts publishRecord).
  it("refuses with an exchanged token's own precondition what that token may not publish, and names whom it found in the entry", async () => {
    const userId = await insertUser(db, { username: 'pipeline', passwordHash: 'x', projectName: 'p', role: 'ROLE_USER' });
    const now = new Date();
    const oidc = { branch: 'main', publisherId: randomUUID(), repositoryUrl: null, provenance: '{}' };
    const exchanged = async (tokenHash: string, expiresAt: Date, kind?: 'ordinary') => {
      const id = randomUUID();
      await insertToken(db, { id, userId, name: tokenHash, scope: 'publish', tokenHash, createdAt: now, expiresAt, ...(kind ? {} : { oidc }) });
      return id;
    };
    const later = new Date(now.getTime() + 600_000);
    const tokenId = await exchanged('hash-of-exchanged', later);
    await exchanged('hash-of-expired', new Date(now.getTime() - 1_000));
    await exchanged('hash-of-ordinary', later, 'ordinary');
    const publish = (tokenHash: string, projectName = 'p') =>
      upsertVersion(db, fields({ groupId: 'exchanged', projectName, version: tokenHash }), oidcPublishPrecondition(tokenHash, projectName, now), undefined, entry('exchanged'));
    expect(await publish('hash-of-expired')).toBeUndefined();
    expect(await publish('hash-of-ordinary')).toBeUndefined();
    expect(await publish('hash-of-unknown')).toBeUndefined();
    expect(await publish('hash-of-exchanged', 'another')).toBeUndefined();
    expect(await db('versions').where({ group_id: 'exchanged' })).toEqual([]);
    expect(await entriesOf('exchanged')).toEqual([]);
    expect(await publish('hash-of-exchanged')).toEqual({ uid: expect.any(String), created: true });
    expect(await entriesOf('exchanged')).toMatchObject([{ user_id: userId, username: 'pipeline', token_id: tokenId }]);
  });
});
