import { describe, expect, it } from 'vitest';
import { AppError } from '../../../common/errors.js';
import type { ProjectToken, ProjectTokenCreated, ProjectTokenList } from '../../../common/schemas/tokens.js';
import { fakeApi, fakeDeps, scriptedPrompter, SERVER } from '../../../test/cli/fakes.js';
import { printReport } from '../../output/index.js';
import { runLogin } from '../login/login.js';
import { expiryOf, runTokenCreate } from './create.js';
import { runTokenList } from './list.js';
import { runTokenRevoke } from './revoke.js';

const ADMIN = { userId: '5c6a1223-076b-4bc0-b0b7-20b0da0e23fd', username: 'admin', projectName: null, role: 'ROLE_ADMIN' as const, mustChangePassword: false };
const SHOP = { userId: '11111111-2222-4333-8444-555555555555', username: 'shop-ci', projectName: 'shop', role: 'ROLE_USER' as const, createdAt: '2026-11-01T00:00:00.000Z' };
const TOKEN = `rpa_${'A'.repeat(43)}`;

const created = (overrides: Partial<ProjectTokenCreated> = {}): ProjectTokenCreated => ({
  id: '0b8e6a8e-3f49-4c7e-9a57-3d1c7d5a2f10',
  name: 'ci',
  scope: 'publish',
  token: TOKEN,
  userId: SHOP.userId,
  username: 'shop-ci',
  projectName: 'shop',
  createdAt: '2026-11-21T10:00:00.000Z',
  expiresAt: null,
  ...overrides,
});

const listed = (overrides: Partial<ProjectToken> = {}): ProjectToken => {
  const { token: _token, ...rest } = created();
  return { ...rest, lastUsedAt: null, ...overrides };
};
/** An answer of GET /v1/tokens: these tokens as page `page` of `totalPages`, `total` in all. */
const tokenPage = (tokens: ProjectToken[], page = 1, totalPages = 1, total = tokens.length): ProjectTokenList => ({
  tokens,
  page: { totalElements: total, totalPages, currentPage: page, numberOfElements: tokens.length },
});
/** The server's 401 when the session is not a fresh login (api.md, "POST /v1/tokens"). */
const notFresh = () =>
  new AppError('unauthorized', 'making a project token needs a fresh login: this session token is more than 15 minutes old', { reason: 'fresh_login_required' });

describe('runTokenCreate', () => {
  it('makes a token for another user (found by name) and prints only the token on stdout', async () => {
    const api = fakeApi({ me: async () => ADMIN, listUsers: async () => ({ users: [SHOP] }), createToken: async () => created() });
    const deps = fakeDeps({ api });
    const report = await runTokenCreate({ name: 'ci', scope: 'publish', user: 'shop-ci', passwordStdin: false }, deps);
    expect(api.calls.find((c) => c.name === 'createToken')?.args).toEqual([{ name: 'ci', scope: 'publish', expiresAt: null, userId: SHOP.userId }]);
    await printReport(report, deps);
    expect(deps.io.stdoutText()).toBe(`${TOKEN}\n`);
    expect(deps.io.stderrText()).toContain('shown only now');
    expect(deps.io.stderrText()).not.toContain(TOKEN);
  });

  it('makes one for the caller without looking up users', async () => {
    const api = fakeApi({ me: async () => ({ ...SHOP, mustChangePassword: false }), createToken: async () => created({ scope: 'read' }) });
    await runTokenCreate({ name: 'ci', scope: 'read', user: 'shop-ci', expiresInDays: 30, passwordStdin: false }, fakeDeps({ api }));
    expect(api.calls.map((c) => c.name)).toEqual(['me', 'createToken']);
    expect(api.calls[1]?.args[0]).toMatchObject({ scope: 'read', expiresAt: '2026-12-21T10:00:00.000Z', userId: SHOP.userId });
  });

  it('names the flags in what is wrong: a name checked before it is sent, an expiry the server refuses', async () => {
    const api = fakeApi({
      me: async () => ({ ...SHOP, mustChangePassword: false }),
      createToken: async () => {
        throw new AppError('validation', 'expiresAt: must be in the future', { errors: [{ path: 'expiresAt', message: 'must be in the future' }] });
      },
    });
    await expect(runTokenCreate({ name: 'n'.repeat(300), scope: 'read', passwordStdin: false }, fakeDeps({ api }))).rejects.toMatchObject({
      code: 'validation',
      message: '--name: at most 100 characters',
    });
    expect(api.calls).toEqual([]);
    await expect(runTokenCreate({ name: 'past', scope: 'read', expires: '2020-01-01', passwordStdin: false }, fakeDeps({ api }))).rejects.toMatchObject({
      code: 'validation',
      message: '--expires: must be in the future',
    });
  });

  it('reads --expires as a date (midnight UTC) or a date-time with an offset, and refuses anything else', () => {
    const now = new Date('2026-11-21T10:00:00.000Z');
    expect(expiryOf({ expires: '2027-06-30' }, now)).toBe('2027-06-30T00:00:00.000Z');
    expect(expiryOf({ expires: '2027-06-30T12:00:00+02:00' }, now)).toBe('2027-06-30T10:00:00.000Z');
    expect(expiryOf({}, now)).toBeNull();
    expect(() => expiryOf({ expires: 'next week' }, now)).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringContaining('--expires') }));
    expect(() => expiryOf({ expires: '2027-06-30T12:00:00' }, now)).toThrow(expect.objectContaining({ code: 'usage' }));
  });
});

describe('runTokenCreate when the login is not fresh', () => {
  /** An API whose first createToken is refused for want of a fresh login; then `second` answers. */
  const refusedOnce = (second: () => Promise<ProjectTokenCreated> = async () => created()) => {
    let calls = 0;
    return fakeApi({
      me: async () => ADMIN,
      listUsers: async () => ({ users: [SHOP] }),
      createToken: async () => {
        if (calls++ === 0) throw notFresh();
        return second();
      },
    });
  };
  const sent = (api: ReturnType<typeof fakeApi>) => api.calls.filter((c) => c.name === 'createToken').map((c) => c.args[0]);

  it("asks for the caller's password on a terminal and tries once more with it", async () => {
    const api = refusedOnce();
    const prompter = scriptedPrompter([{ password: 'admin-secret' }]);
    const report = await runTokenCreate({ name: 'ci', scope: 'publish', user: 'shop-ci', passwordStdin: false }, fakeDeps({ api, tty: true, prompter }));
    expect(prompter.asked).toEqual(['Your login is not fresh enough to make a project token: password of admin:']);
    expect(sent(api)).toEqual([
      { name: 'ci', scope: 'publish', expiresAt: null, userId: SHOP.userId },
      { name: 'ci', scope: 'publish', expiresAt: null, userId: SHOP.userId, password: 'admin-secret' },
    ]);
    expect(report.lines).toEqual([TOKEN]);
  });

  it('takes the password from standard input with --password-stdin, without asking', async () => {
    const api = refusedOnce();
    await runTokenCreate({ name: 'ci', scope: 'publish', user: 'shop-ci', passwordStdin: true }, fakeDeps({ api, tty: true, stdin: 'admin-secret\n' }));
    expect(sent(api)[1]).toMatchObject({ password: 'admin-secret' });
  });

  it('sends no password while the login is fresh, even with --password-stdin', async () => {
    const api = fakeApi({ me: async () => ADMIN, listUsers: async () => ({ users: [SHOP] }), createToken: async () => created() });
    await runTokenCreate({ name: 'ci', scope: 'publish', user: 'shop-ci', passwordStdin: true }, fakeDeps({ api, stdin: 'admin-secret' }));
    expect(sent(api)).toEqual([{ name: 'ci', scope: 'publish', expiresAt: null, userId: SHOP.userId }]);
  });

  it.each([
    ['without a terminal', { tty: false, env: {} }, 'no terminal to ask on'],
    ['with CI set', { tty: true, env: { CI: 'true' } }, 'CI is set, so nothing is asked'],
  ])('fails %s with a 401 (exit 4) that names --password-stdin', async (_name, where, reason) => {
    const api = refusedOnce();
    const error = await runTokenCreate({ name: 'ci', scope: 'publish', user: 'shop-ci', passwordStdin: false }, fakeDeps({ api, ...where })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('--password-stdin') });
    expect((error as AppError).message).toContain('needs a fresh login');
    expect((error as AppError).message).toContain(reason);
    expect(sent(api)).toHaveLength(1);
  });

  it('asks once: a wrong password ends the command with the server\'s message', async () => {
    const api = refusedOnce(async () => {
      throw new AppError('unauthorized', 'wrong password for admin: no project token was made', { reason: 'fresh_login_required' });
    });
    const prompter = scriptedPrompter([{ password: 'wrong' }]);
    await expect(runTokenCreate({ name: 'ci', scope: 'publish', user: 'shop-ci', passwordStdin: false }, fakeDeps({ api, tty: true, prompter }))).rejects.toMatchObject({
      code: 'unauthorized',
      message: 'wrong password for admin: no project token was made',
    });
    expect(sent(api)).toHaveLength(2);
    expect(prompter.asked).toHaveLength(1);
  });

  it('does not ask for any other refusal', async () => {
    const api = fakeApi({
      me: async () => ADMIN,
      listUsers: async () => ({ users: [SHOP] }),
      createToken: async () => {
        throw new AppError('unauthorized', 'the token has expired: get a new one');
      },
    });
    const prompter = scriptedPrompter([]);
    await expect(runTokenCreate({ name: 'ci', scope: 'publish', user: 'shop-ci', passwordStdin: false }, fakeDeps({ api, tty: true, prompter }))).rejects.toMatchObject({
      message: 'the token has expired: get a new one',
    });
    expect(sent(api)).toHaveLength(1);
  });
});

describe('runTokenList', () => {
  it('lists every token the server gives, with never for no expiry or no use', async () => {
    const api = fakeApi({ listTokens: async () => tokenPage([listed(), listed({ id: '0b8e6a8e-3f49-4c7e-9a57-3d1c7d5a2f11', name: 'nightly', expiresAt: '2027-01-01T00:00:00.000Z', lastUsedAt: '2026-11-21T09:00:00.000Z' })]) });
    const deps = fakeDeps({ api });
    const report = await runTokenList({}, deps);
    expect(api.calls).toEqual([{ name: 'listTokens', args: [{ userId: undefined, page: 1, size: 100 }] }]);
    await printReport(report, deps);
    expect(deps.io.stdoutText().split('\n')[0]).toBe(`ci\tpublish\tshop-ci\tshop\t2026-11-21T10:00:00.000Z\tnever\tnever\t${listed().id}`);
    expect(deps.io.stdoutText()).toContain('nightly\tpublish\tshop-ci\tshop\t2026-11-21T10:00:00.000Z\t2027-01-01T00:00:00.000Z\t2026-11-21T09:00:00.000Z');
  });

  it('asks for one user\'s with --user', async () => {
    const api = fakeApi({ me: async () => ADMIN, listUsers: async () => ({ users: [SHOP] }), listTokens: async () => tokenPage([]) });
    const report = await runTokenList({ user: 'shop-ci' }, fakeDeps({ api }));
    expect(api.calls.at(-1)).toEqual({ name: 'listTokens', args: [{ userId: SHOP.userId, page: 1, size: 100 }] });
    expect(report.notes).toEqual(['No project tokens.']);
  });
});

describe('runTokenList paging', () => {
  const names = (report: { table?: { rows: unknown[][] } }) => report.table!.rows.map((r) => r[0]);

  it('fetches every page, 100 a request, and lists a token seen on two pages once', async () => {
    const pages = [
      tokenPage([listed({ id: '00000000-0000-4000-8000-000000000001', name: 'a' }), listed({ id: '00000000-0000-4000-8000-000000000002', name: 'b' })], 1, 3, 5),
      // A token made meanwhile moved `b` onto the second page too.
      tokenPage([listed({ id: '00000000-0000-4000-8000-000000000002', name: 'b' }), listed({ id: '00000000-0000-4000-8000-000000000003', name: 'c' })], 2, 3, 5),
      tokenPage([listed({ id: '00000000-0000-4000-8000-000000000004', name: 'd' })], 3, 3, 5),
    ];
    const api = fakeApi({ listTokens: async (query) => pages[(query.page ?? 1) - 1]! });
    const report = await runTokenList({}, fakeDeps({ api }));
    expect(api.calls.map((c) => c.args[0])).toEqual([1, 2, 3].map((page) => ({ userId: undefined, page, size: 100 })));
    expect(names(report)).toEqual(['a', 'b', 'c', 'd']);
    expect(report.json).toEqual({ tokens: expect.any(Array), page: { totalElements: 4, totalPages: 1, currentPage: 1, numberOfElements: 4 } });
    expect(report.notes).toEqual([]);
  });

  it('stops after one answer from a server that does not page', async () => {
    const api = fakeApi({ listTokens: async () => ({ tokens: [listed()] }) as unknown as ProjectTokenList });
    const report = await runTokenList({}, fakeDeps({ api }));
    expect(api.calls).toHaveLength(1);
    expect(names(report)).toEqual(['ci']);
  });

  it('asks for one page with --page or --size, and says where the next one is', async () => {
    const api = fakeApi({ listTokens: async () => tokenPage([listed({ name: 'c' })], 2, 3, 5) });
    const report = await runTokenList({ page: 2, size: 2 }, fakeDeps({ api }));
    expect(api.calls).toEqual([{ name: 'listTokens', args: [{ userId: undefined, page: 2, size: 2 }] }]);
    expect(report.notes).toEqual(['Page 2 of 3 (5 tokens): --page 3 for the next, or leave out --page and --size for all.']);
    await runTokenList({ size: 2 }, fakeDeps({ api }));
    expect(api.calls.at(-1)).toEqual({ name: 'listTokens', args: [{ userId: undefined, page: undefined, size: 2 }] });
    const past = fakeApi({ listTokens: async () => tokenPage([], 9, 3, 5) });
    expect((await runTokenList({ page: 9 }, fakeDeps({ api: past }))).notes).toEqual(['Page 9 is past the last page (3) of the 5 tokens.']);
  });

  it('revoke finds a token by name on a later page', async () => {
    const pages = [tokenPage([listed({ name: 'a', id: '00000000-0000-4000-8000-000000000001' })], 1, 2, 2), tokenPage([listed()], 2, 2, 2)];
    const api = fakeApi({ me: async () => ADMIN, listUsers: async () => ({ users: [SHOP] }), listTokens: async (query) => pages[(query.page ?? 1) - 1]!, revokeToken: async () => undefined });
    await runTokenRevoke({ token: 'ci', user: 'shop-ci', yes: true }, fakeDeps({ api }));
    expect(api.calls.at(-1)).toEqual({ name: 'revokeToken', args: [listed().id] });
  });
});

describe('runTokenRevoke', () => {
  it('finds the token by name among the user\'s and asks on a terminal', async () => {
    const api = fakeApi({ me: async () => ADMIN, listUsers: async () => ({ users: [SHOP] }), listTokens: async () => tokenPage([listed()]), revokeToken: async () => undefined });
    const prompter = scriptedPrompter([{ confirm: true }]);
    const report = await runTokenRevoke({ token: 'ci', user: 'shop-ci', yes: false }, fakeDeps({ api, tty: true, prompter }));
    expect(prompter.asked[0]).toContain('Revoke the publish token "ci" of shop-ci (never used)?');
    expect(api.calls.at(-1)).toEqual({ name: 'revokeToken', args: [listed().id] });
    expect(report.json).toEqual({ id: listed().id, name: 'ci', username: 'shop-ci' });
  });

  it('revokes nothing when the answer is no', async () => {
    const api = fakeApi({ me: async () => ADMIN, listTokens: async () => tokenPage([listed({ userId: ADMIN.userId, username: 'admin' })]) });
    await expect(runTokenRevoke({ token: 'ci', yes: false }, fakeDeps({ api, tty: true, prompter: scriptedPrompter([{ confirm: false }]) }))).rejects.toMatchObject({
      code: 'validation',
      message: 'not confirmed: nothing was revoked',
    });
    expect(api.calls.map((c) => c.name)).not.toContain('revokeToken');
  });

  it('needs --yes off a terminal, and takes an id without a user', async () => {
    const api = fakeApi({ listTokens: async () => tokenPage([listed()]), revokeToken: async () => undefined });
    await expect(runTokenRevoke({ token: listed().id, yes: false }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--yes') });
    await runTokenRevoke({ token: listed().id.toUpperCase(), yes: true }, fakeDeps({ api }));
    expect(api.calls.map((c) => c.name)).toEqual(['listTokens', 'listTokens', 'revokeToken']);
  });

  it('says not found (exit 3) for an unknown name', async () => {
    const api = fakeApi({ me: async () => ADMIN, listTokens: async () => tokenPage([]) });
    await expect(runTokenRevoke({ token: 'nope', yes: true }, fakeDeps({ api }))).rejects.toMatchObject({
      code: 'not_found',
      message: 'no project token named nope of admin: see repoadmin token list',
    });
  });
});

describe('runTokenRevoke --all', () => {
  it("revokes every token of --user after asking, and says how many", async () => {
    const api = fakeApi({ me: async () => ADMIN, listUsers: async () => ({ users: [SHOP] }), revokeAllTokens: async () => ({ revoked: 3 }) });
    const prompter = scriptedPrompter([{ confirm: true }]);
    const report = await runTokenRevoke({ all: true, user: 'shop-ci', yes: false }, fakeDeps({ api, tty: true, prompter }));
    expect(prompter.asked[0]).toContain('Revoke every project token of shop-ci?');
    expect(api.calls.at(-1)).toEqual({ name: 'revokeAllTokens', args: [SHOP.userId] });
    expect(report).toEqual({ json: { userId: SHOP.userId, username: 'shop-ci', revoked: 3 }, notes: ['Revoked 3 project tokens of shop-ci.'] });
  });

  it("takes the caller's own without --user, and revokes nothing when the answer is no", async () => {
    const api = fakeApi({ me: async () => ADMIN });
    await expect(runTokenRevoke({ all: true, yes: false }, fakeDeps({ api, tty: true, prompter: scriptedPrompter([{ confirm: false }]) }))).rejects.toMatchObject({
      code: 'validation',
      message: 'not confirmed: nothing was revoked',
    });
    expect(api.calls.map((c) => c.name)).toEqual(['me']);
  });

  it('is a usage error with a token named too, and without either', async () => {
    const api = fakeApi();
    await expect(runTokenRevoke({ all: true, token: 'ci', yes: true }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'usage' });
    await expect(runTokenRevoke({ yes: true }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--all') });
    expect(api.calls).toEqual([]);
  });
});

describe('runLogin --with-token', () => {
  it('checks the token with the server and stores it without an expiry', async () => {
    const api = fakeApi({ meWithToken: async () => ({ ...SHOP, mustChangePassword: false }) });
    const deps = fakeDeps({ api, stdin: `${TOKEN}\n`, settings: { url: `${SERVER}/` } });
    const report = await runLogin({ passwordStdin: false, withToken: true }, deps);
    expect(api.calls).toEqual([{ name: 'meWithToken', args: [TOKEN, SERVER] }]);
    expect(deps.config.data()).toEqual({
      current: SERVER,
      servers: { [SERVER]: { url: SERVER, username: 'shop-ci', userId: SHOP.userId, token: TOKEN, expiresAt: null, projectName: 'shop', role: 'ROLE_USER' } },
    });
    expect(report.notes?.[0]).toBe(`Logged in to ${SERVER} as shop-ci (ROLE_USER, project shop) with a project token.`);
  });

  it('refuses empty standard input', async () => {
    await expect(runLogin({ passwordStdin: false, withToken: true }, fakeDeps({ stdin: '\n', settings: { url: SERVER } }))).rejects.toMatchObject({ code: 'usage' });
  });
});
