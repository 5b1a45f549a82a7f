// The user routes: create, list, who am I, delete, conflicts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../helpers/db.js';
import { DEFAULT_ADMIN_ID, type TestServer, startTestServer } from '../helpers/server.js';

describe.each(dbKinds())('users on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
  });
  afterAll(() => server?.close());

  const create = (body: Record<string, unknown>) => server.request('POST', '/v1/users', { token: admin, body });

  it('tells user names apart by letter case (unique, case-sensitive)', async () => {
    const upper = await create({ username: 'Casey', password: 'casey-secret', projectName: 'p', role: 'ROLE_USER' });
    const lower = await create({ username: 'casey', password: 'other-secret', projectName: 'p', role: 'ROLE_USER' });
    expect([upper.status, lower.status]).toEqual([201, 201]);
    expect(upper.body.userId).not.toBe(lower.body.userId);
    const login = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'casey', password: 'casey-secret' } });
    expect(login.status).toBe(401);
    const own = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'Casey', password: 'casey-secret' } });
    expect(own.body.userId).toBe(upper.body.userId);
  });

  it('creates, lists and deletes users; a new user gets its own token', async () => {
    const res = await create({ username: 'team.a@ci', password: 'team-secret', projectName: 'team-a', role: 'ROLE_USER' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ userId: expect.stringMatching(/^[0-9a-f-]{36}$/), valid: true });
    const row = await server.db('users').where({ id: res.body.userId }).first();
    expect(row.password_hash).toMatch(/^\$2[aby]\$04\$/);
    expect(JSON.stringify(row)).not.toContain('team-secret');

    const token = await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'team.a@ci', password: 'team-secret' } });
    expect(token.body).toMatchObject({ userId: res.body.userId, role: 'ROLE_USER', projectName: 'team-a', mustChangePassword: false });
    const me = await server.request('GET', '/v1/users/me', { token: token.body.token });
    expect(me.body).toEqual({ userId: res.body.userId, username: 'team.a@ci', projectName: 'team-a', role: 'ROLE_USER', mustChangePassword: false });

    const list = await server.request('GET', '/v1/users', { token: admin });
    expect(list.status).toBe(200);
    const names = list.body.users.map((u: { username: string }) => u.username);
    expect(names).toEqual(expect.arrayContaining(['admin', 'team.a@ci']));
    const listed = list.body.users.find((u: { username: string }) => u.username === 'team.a@ci');
    expect(listed).toEqual({ userId: res.body.userId, username: 'team.a@ci', projectName: 'team-a', role: 'ROLE_USER', createdAt: expect.stringMatching(/Z$/) });
    expect(JSON.stringify(list.body)).not.toMatch(/password/i);

    const del = await server.request('DELETE', `/v1/users/${res.body.userId}`, { token: admin });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await server.request('DELETE', `/v1/users/${res.body.userId}`, { token: admin })).status).toBe(404);
    expect((await server.request('DELETE', '/v1/users/not-a-uuid', { token: admin })).status).toBe(400);
  });

  it('answers 409 with valid: false for a taken name (case-sensitive)', async () => {
    const body = { username: 'dup', password: 'dup-secret', projectName: 'p', role: 'ROLE_USER' };
    expect((await create(body)).status).toBe(201);
    const again = await create(body);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ _status: false, valid: false, userId: null, _message: { code: 'conflict' } });
    expect((await create({ ...body, username: 'DUP' })).status).toBe(201);
  });

  it.each([
    [{ password: 'long-enough', projectName: 'p', role: 'ROLE_USER' }, 'username', 'required'],
    [{ username: 'x', projectName: 'p', role: 'ROLE_USER' }, 'password', 'required'],
    [{ username: 'x', password: 'long-enough', role: 'ROLE_USER' }, 'projectName', 'required'],
    [{ username: 'x', password: 'long-enough', projectName: 'p' }, 'role', 'required'],
    [{ username: 'x', password: 'long-enough', projectName: 'p', role: 'ROLE_ROOT' }, 'role', expect.any(String)],
    [{ username: 'has space', password: 'long-enough', projectName: 'p', role: 'ROLE_USER' }, 'username', 'only letters, digits and . _ @ -'],
    [{ username: 'u'.repeat(101), password: 'long-enough', projectName: 'p', role: 'ROLE_USER' }, 'username', 'at most 100 characters'],
    [{ username: 'x', password: 'long-enough', projectName: 'p'.repeat(101), role: 'ROLE_USER' }, 'projectName', 'at most 100 characters'],
    [{ username: 'x', password: 'short', projectName: 'p', role: 'ROLE_USER' }, 'password', 'at least 8 bytes'],
  ])('rejects %j with 400 at %s', async (body, path, message) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ valid: false, userId: null, errors: [{ path, message }] });
  });

  it('never deletes the last administrator (409), but one of two', async () => {
    const last = await server.request('DELETE', `/v1/users/${DEFAULT_ADMIN_ID}`, { token: admin });
    expect(last.status).toBe(409);
    expect(last.body._message.code).toBe('conflict');
    const second = await create({ username: 'admin2', password: 'admin2-secret', projectName: 'ops', role: 'ROLE_ADMIN' });
    expect((await server.request('DELETE', `/v1/users/${second.body.userId}`, { token: admin })).status).toBe(204);
    expect((await server.request('DELETE', `/v1/users/${DEFAULT_ADMIN_ID}`, { token: admin })).status).toBe(409);
  });

  it('answers 404 with valid: false for the password of an unknown user, 400 for a bad id', async () => {
    const unknown = await server.request('PUT', '/v1/users/00000000-0000-4000-8000-000000000000/password', { token: admin, body: { password: 'long-enough' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ valid: false, userId: '00000000-0000-4000-8000-000000000000' });
    const bad = await server.request('PUT', '/v1/users/xyz/password', { token: admin, body: { password: 'long-enough' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ valid: false, userId: 'xyz', errors: [{ path: 'userId', message: 'must be a UUID' }] });
  });
});
