// Publishing and searching version records, against PGlite and (when configured) PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertVersion } from '../../server/db/versions.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const record = (over: Record<string, unknown> = {}, artifact: Record<string, unknown> = {}) => ({
  projectName: 'alpha',
  branch: 'main',
  artifact: { groupId: 'com.acme', artifactId: 'core', version: '1.0.0', ...artifact },
  repositoryUrl: 'https://git.acme.test/alpha/core.git',
  creationDate: '2019-03-02T20:30:35.420+0000',
  type: 'LIBRARY',
  latestVersion: false,
  description: 'First **release**',
  ...over,
});

describe.each(dbKinds())('repositories on %s', (kind) => {
  let server: TestServer;
  let admin: string;
  let alphaToken: string;

  const publish = (body: unknown, token = admin) => server.request('POST', '/v1/repositories', { body, token });
  const search = (body: unknown, query = '') =>
    server.request('POST', `/v1/repositories/search${query}`, body === undefined ? {} : { body });

  beforeAll(async () => {
    server = await startTestServer({ kind });
    admin = await server.adminToken();
    await server.request('POST', '/v1/users', {
      token: admin,
      body: { username: 'alpha-ci', password: 'alpha-secret', projectName: 'alpha', role: 'ROLE_USER' },
    });
    alphaToken = (
      await server.request('POST', '/v1/authentication/generate-token', { body: { username: 'alpha-ci', password: 'alpha-secret' } })
    ).body.token;
  });
  afterAll(() => server?.close());

  describe('publish', () => {
    it('stores a record that a search by group and artifact finds again, in the shapes of the specification', async () => {
      const res = await publish(record({}, { artifactId: 'shape' }), alphaToken);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ _status: true, uid: expect.stringMatching(/^[0-9a-f-]{36}$/), created: true });
      // On PostgreSQL a write's answer names its WAL position even on a server that reads from no
      // replica: another server of the same database may (a writer beside a reader, deploy/patroni/).
      if (kind === 'postgres') expect(res.headers.get('x-repoadmin-position')).toMatch(/^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/);
      else expect(res.headers.get('x-repoadmin-position')).toBeNull();
      const found = await search({ groupId: 'com.acme', artifactId: 'shape' });
      expect(found.status).toBe(200);
      expect(found.body).toEqual({
        versionInformation: [
          {
            uid: res.body.uid,
            projectName: 'alpha',
            branch: 'main',
            groupId: 'com.acme',
            artifactId: 'shape',
            version: '1.0.0',
            artifact: { groupId: 'com.acme', artifactId: 'shape', version: '1.0.0' },
            repositoryUrl: 'https://git.acme.test/alpha/core.git',
            creationDate: '2019-03-02T20:30:35.420+0000',
            type: 'LIBRARY',
            latestVersion: false,
            description: 'First **release**',
            provenance: null,
            veto: null,
          },
        ],
        page: { totalElements: 1, totalPages: 1, currentPage: 1, numberOfElements: 1 },
      });
      const one = await server.request('GET', `/v1/repositories/${res.body.uid}`);
      expect(one.body).toEqual(found.body.versionInformation[0]);
    });

    it('replaces the record of the same coordinates, keeping its uid, never duplicating', async () => {
      const first = await publish(record({ description: 'one' }, { artifactId: 'retry' }));
      const again = await publish(record({ description: 'two', repositoryUrl: undefined, type: undefined }, { artifactId: 'retry' }));
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ _status: true, uid: first.body.uid, created: false });
      const found = await search({ artifactId: 'retry' });
      expect(found.body.page.totalElements).toBe(1);
      expect(found.body.versionInformation[0]).toMatchObject({ description: 'two', repositoryUrl: null, type: 'LIBRARY' });
      const rows = await server.db('versions').where({ artifact_id: 'retry' });
      expect(rows).toHaveLength(1);
    });

    it('keeps exactly one latest record per project, artifact and branch', async () => {
      for (const version of ['1.0.0', '1.1.0', '1.2.0']) {
        await publish(record({ latestVersion: true }, { artifactId: 'moving', version }));
      }
      await publish(record({ latestVersion: true, branch: 'develop' }, { artifactId: 'moving', version: '2.0.0-SNAPSHOT' }));
      await publish(record({ latestVersion: true, projectName: 'beta' }, { artifactId: 'moving', version: '9.9.9' }));
      const latest = await search({ artifactId: 'moving', latestVersion: true }, '?sortField=version');
      expect(latest.body.versionInformation.map((v: { projectName: string; branch: string; version: string }) => `${v.projectName}/${v.branch}/${v.version}`)).toEqual([
        'alpha/main/1.2.0',
        'alpha/develop/2.0.0-SNAPSHOT',
        'beta/main/9.9.9',
      ]);
      const main = await server.request('GET', '/v1/repositories/latest?groupId=com.acme&artifactId=moving&branch=main&projectName=alpha');
      expect(main.status).toBe(200);
      expect(main.body.version).toBe('1.2.0');
      // Republishing an older version as latest moves the flag back.
      await publish(record({ latestVersion: true }, { artifactId: 'moving', version: '1.0.0' }));
      const back = await server.request('GET', '/v1/repositories/latest?groupId=com.acme&artifactId=moving&branch=main&projectName=alpha');
      expect(back.body.version).toBe('1.0.0');
      // Without branch and project: the most recently written latest record.
      const any = await server.request('GET', '/v1/repositories/latest?groupId=com.acme&artifactId=moving');
      expect(any.body.version).toBe('1.0.0');
      const none = await server.request('GET', '/v1/repositories/latest?groupId=com.acme&artifactId=absent');
      expect(none.status).toBe(404);
      expect(none.body._message.code).toBe('not_found');
      const missing = await server.request('GET', '/v1/repositories/latest?groupId=com.acme');
      expect(missing.status).toBe(400);
      expect(missing.body.errors).toEqual([{ path: 'artifactId', message: 'required' }]);
    });

    // Caught mutations (db/versions.ts findLatest): `key.branch && …` or `key.projectName && …` made
    // `||`, `scope.length ?` made `true` or `false`, and the texts " on " and ", " made "".
    it('says which latest record is missing: the artifact, and the branch and project asked for', async () => {
      await publish(record({ latestVersion: true }, { artifactId: 'told', version: '1.0.0' }));
      const missing = async (query: string) => {
        const res = await server.request('GET', `/v1/repositories/latest?groupId=com.acme&${query}`);
        expect(res.status).toBe(404);
        return res.body._message.message as string;
      };
      expect(await missing('artifactId=untold')).toBe('no latest version of com.acme:untold');
      expect(await missing('artifactId=told&branch=develop')).toBe('no latest version of com.acme:told on branch develop');
      expect(await missing('artifactId=told&projectName=beta')).toBe('no latest version of com.acme:told on project beta');
      expect(await missing('artifactId=told&branch=develop&projectName=alpha')).toBe('no latest version of com.acme:told on branch develop, project alpha');
    });

    it('lets a project user publish only to its own project', async () => {
      const other = await publish(record({ projectName: 'beta' }, { artifactId: 'foreign' }), alphaToken);
      expect(other.status).toBe(403);
      expect(other.body._message.code).toBe('forbidden');
      expect(await server.db('versions').where({ artifact_id: 'foreign' })).toHaveLength(0);
    });

    it('strips credentials from http(s) repository addresses', async () => {
      await publish(record({ repositoryUrl: 'https://ci:s3cr3t@git.acme.test/a.git' }, { artifactId: 'creds' }));
      const found = await search({ artifactId: 'creds' });
      expect(found.body.versionInformation[0].repositoryUrl).toBe('https://git.acme.test/a.git');
      await publish(record({ repositoryUrl: 'https://ci:p@ss@git.acme.test/b.git?ref=main' }, { artifactId: 'creds-at' }));
      expect((await search({ artifactId: 'creds-at' })).body.versionInformation[0].repositoryUrl).toBe('https://git.acme.test/b.git?ref=main');
    });

    it.each([
      ['2019-03-02T20:30:35.420+0000', '2019-03-02T20:30:35.420+0000'],
      ['2019-03-02T21:30:35.420+01:00', '2019-03-02T20:30:35.420+0000'],
      ['2019-03-02T20:30:35.420Z', '2019-03-02T20:30:35.420+0000'],
      ['2019-03-02T20:30:35Z', '2019-03-02T20:30:35.000+0000'],
      ['2019-03-02T15:30:35-0500', '2019-03-02T20:30:35.000+0000'],
    ])('accepts the creationDate %s and answers it in UTC as %s', async (input, output) => {
      const artifactId = `date-${input.replace(/[^0-9]/g, '')}`;
      expect((await publish(record({ creationDate: input }, { artifactId }))).status).toBe(201);
      expect((await search({ artifactId })).body.versionInformation[0].creationDate).toBe(output);
    });

    it.each(['2019-03-02T20:30:35.420', '2019-03-02', '2019-02-30T10:00:00Z', '2019-03-02T25:00:00Z', 'yesterday', '2019-03-02T20:30:35+2500'])(
      'rejects the creationDate %s',
      async (input) => {
        const res = await publish(record({ creationDate: input }, { artifactId: 'bad-date' }));
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ path: 'creationDate', message: expect.stringContaining('ISO 8601') }]);
      },
    );

    it('defaults the creation date to now, the type to LIBRARY and latestVersion to false', async () => {
      const before = Date.now();
      await publish({ projectName: 'alpha', branch: 'main', artifact: { groupId: 'g.min', artifactId: 'minimal', version: '1' } });
      const v = (await search({ artifactId: 'minimal' })).body.versionInformation[0];
      expect(v).toMatchObject({ type: 'LIBRARY', latestVersion: false, repositoryUrl: null, description: null });
      const created = Date.parse(v.creationDate.replace('+0000', 'Z'));
      expect(created).toBeGreaterThanOrEqual(before - 1000);
      expect(created).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it.each([
      ['projectName', (r: Record<string, unknown>) => delete r.projectName, 'projectName', 'required'],
      ['branch', (r: Record<string, unknown>) => delete r.branch, 'branch', 'required'],
      ['artifact', (r: Record<string, unknown>) => delete r.artifact, 'artifact', 'required'],
      ['groupId', (r: { artifact: Record<string, unknown> }) => delete r.artifact.groupId, 'artifact.groupId', 'required'],
      ['artifactId', (r: { artifact: Record<string, unknown> }) => delete r.artifact.artifactId, 'artifact.artifactId', 'required'],
      ['version', (r: { artifact: Record<string, unknown> }) => delete r.artifact.version, 'artifact.version', 'required'],
      ['empty version', (r: { artifact: Record<string, unknown> }) => (r.artifact.version = ''), 'artifact.version', 'must not be empty'],
      ['long projectName', (r: Record<string, unknown>) => (r.projectName = 'p'.repeat(101)), 'projectName', 'at most 100 characters'],
      ['long branch', (r: Record<string, unknown>) => (r.branch = 'b'.repeat(256)), 'branch', 'at most 255 characters'],
      ['long groupId', (r: { artifact: Record<string, unknown> }) => (r.artifact.groupId = 'g'.repeat(101)), 'artifact.groupId', 'at most 100 characters'],
      ['long artifactId', (r: { artifact: Record<string, unknown> }) => (r.artifact.artifactId = 'a'.repeat(101)), 'artifact.artifactId', 'at most 100 characters'],
      ['long version', (r: { artifact: Record<string, unknown> }) => (r.artifact.version = '1'.repeat(101)), 'artifact.version', 'at most 100 characters'],
      ['long type', (r: Record<string, unknown>) => (r.type = 't'.repeat(256)), 'type', 'at most 255 characters'],
      ['long url', (r: Record<string, unknown>) => (r.repositoryUrl = `https://h/${'u'.repeat(510)}`), 'repositoryUrl', 'at most 512 characters'],
      ['bad url', (r: Record<string, unknown>) => (r.repositoryUrl = 'not a url'), 'repositoryUrl', 'must be an http(s), ssh or scp-style git address'],
      ['long description', (r: Record<string, unknown>) => (r.description = 'd'.repeat(64 * 1024 + 1)), 'description', 'at most 65536 bytes'],
      ['latestVersion type', (r: Record<string, unknown>) => (r.latestVersion = 'maybe'), 'latestVersion', 'must be a boolean'],
    ])('answers 400 with a precise path for %s', async (_name, mutate, path, message) => {
      const body = record({}, { artifactId: 'invalid' });
      (mutate as (r: unknown) => void)(body);
      const res = await publish(body);
      expect(res.status).toBe(400);
      expect(res.body._status).toBe(false);
      expect(res.body._message).toEqual({ category: 'ERROR', code: 'validation', message: `${path}: ${message}` });
      expect(res.body.errors).toEqual([{ path, message }]);
      expect(await server.db('versions').where({ artifact_id: 'invalid' })).toHaveLength(0);
    });

    it('accepts ssh and scp-style addresses and ignores unknown fields', async () => {
      for (const [artifactId, url] of [['ssh1', 'ssh://git@git.acme.test/a.git'], ['scp1', 'git@git.acme.test:org/a.git']]) {
        const res = await publish({ ...record({ repositoryUrl: url }, { artifactId }), dependencies: [{ x: 1 }], uid: 'mine' });
        expect(res.status).toBe(201);
        expect(res.body.uid).not.toBe('mine');
      }
    });
  });

  describe('search', () => {
    beforeAll(async () => {
      const data: [string, string, string, string, string, string, boolean][] = [
        // project, branch, group, artifact, version, type, latest
        ['s1', 'main', 'org.search', 'lib_a', '1.0.0', 'LIBRARY', false],
        ['s1', 'main', 'org.search', 'lib_a', '1.1.0', 'LIBRARY', true],
        ['s1', 'dev', 'org.search', 'lib_a', '1.2.0-SNAPSHOT', 'LIBRARY', true],
        ['s2', 'main', 'org.search', 'libXa', '3.0.0', 'SERVICE', true],
        ['s2', 'main', 'org.search.sub', 'lib%a', '0.1', 'LIBRARY', false],
        ['s2', 'main', 'org.search', 'star*lib', '0.2', 'LIBRARY', false],
      ];
      let second = 0;
      for (const [projectName, branch, groupId, artifactId, version, type, latestVersion] of data) {
        second++;
        const res = await publish({
          projectName,
          branch,
          artifact: { groupId, artifactId, version },
          type,
          latestVersion,
          creationDate: `2020-01-01T00:00:0${second}.000Z`,
        });
        expect(res.status).toBe(201);
      }
    });

    const versionsOf = (res: { body: { versionInformation: { version: string }[] } }) => res.body.versionInformation.map((v) => v.version);

    it.each([
      [{ projectName: 's1', groupId: 'org.search' }, ['1.2.0-SNAPSHOT', '1.1.0', '1.0.0']],
      [{ branch: 'dev', groupId: 'org.search' }, ['1.2.0-SNAPSHOT']],
      [{ groupId: 'org.search', artifactId: 'lib_a' }, ['1.2.0-SNAPSHOT', '1.1.0', '1.0.0']],
      [{ groupId: 'org.search', version: '3.0.0' }, ['3.0.0']],
      [{ groupId: 'org.search', type: 'SERVICE' }, ['3.0.0']],
      [{ groupId: 'org.search', latestVersion: true }, ['3.0.0', '1.2.0-SNAPSHOT', '1.1.0']],
      [{ groupId: 'org.search', latestVersion: false, projectName: 's1' }, ['1.2.0-SNAPSHOT', '1.1.0', '1.0.0']],
      [{ artifact: { groupId: 'org.search', artifactId: 'lib_a', version: '1.1.0' } }, ['1.1.0']],
      [{ artifact: { groupId: 'org.search', artifactId: 'lib_a' }, artifactId: 'libXa' }, ['3.0.0']],
      [{ groupId: 'org.search*' }, ['0.2', '0.1', '3.0.0', '1.2.0-SNAPSHOT', '1.1.0', '1.0.0']],
      [{ groupId: 'org.*', artifactId: 'lib%a' }, ['0.1']],
      [{ groupId: 'org.search', artifactId: 'lib_*' }, ['1.2.0-SNAPSHOT', '1.1.0', '1.0.0']],
      [{ groupId: 'org.search', artifactId: 'star\\*lib' }, ['0.2']],
      [{ groupId: 'org.search', artifactId: 'star*' }, ['0.2']],
      [{ groupId: 'org.search', artifactId: '', branch: '' }, ['0.2', '3.0.0', '1.2.0-SNAPSHOT', '1.1.0', '1.0.0']],
    ])('filters %j', async (filters, expected) => {
      const res = await search(filters);
      expect(res.status).toBe(200);
      expect(versionsOf(res)).toEqual(expected);
    });

    it('treats % and _ in the data and in filters literally', async () => {
      expect(versionsOf(await search({ groupId: 'org.search', artifactId: 'lib_a' }))).toEqual(['1.2.0-SNAPSHOT', '1.1.0', '1.0.0']);
      expect(versionsOf(await search({ groupId: 'org.search', artifactId: 'lib%' }))).toEqual([]);
      expect(versionsOf(await search({ groupId: 'org.search*', artifactId: 'lib%*' }))).toEqual(['0.1']);
      expect(versionsOf(await search({ groupId: 'org.search', artifactId: 'lib_*' }))).not.toContain('3.0.0');
    });

    it('returns everything for {} and for an empty body without Content-Type', async () => {
      const all = await search({});
      const none = await server.request('POST', '/v1/repositories/search');
      expect(all.status).toBe(200);
      expect(none.status).toBe(200);
      expect(none.body.page.totalElements).toBe(all.body.page.totalElements);
      expect(all.body.page.totalElements).toBeGreaterThan(6);
    });

    it('pages 1-based, with the older 0-based aPage/aSize and page=0', async () => {
      const q = { groupId: 'org.search*' };
      const p2 = await search(q, '?page=2&size=4');
      expect(p2.body.page).toEqual({ totalElements: 6, totalPages: 2, currentPage: 2, numberOfElements: 2 });
      expect(versionsOf(p2)).toEqual(['1.1.0', '1.0.0']);
      const a1 = await search(q, '?aPage=1&aSize=4');
      expect(versionsOf(a1)).toEqual(['1.1.0', '1.0.0']);
      expect(a1.body.page.currentPage).toBe(2);
      const both = await search(q, '?aPage=0&aSize=2&page=3&size=2');
      expect(both.body.page.currentPage).toBe(3);
      expect(versionsOf(both)).toEqual(['1.1.0', '1.0.0']);
      const zero = await search(q, '?page=0&size=2');
      expect(zero.body.page.currentPage).toBe(1);
      expect(versionsOf(zero)).toEqual(['0.2', '0.1']);
      const clamp = await search(q, '?aSize=500');
      expect(clamp.status).toBe(200);
      expect(clamp.body.page.numberOfElements).toBe(6);
      const past = await search(q, '?page=9&size=4');
      expect(past.body).toEqual({ versionInformation: [], page: { totalElements: 6, totalPages: 2, currentPage: 9, numberOfElements: 0 } });
      const defaults = await search({});
      expect(defaults.body.page.numberOfElements).toBe(10);
    });

    it.each([
      ['?size=101', 'size'],
      ['?size=0', 'size'],
      ['?page=-1', 'page'],
      ['?page=abc', 'page'],
      ['?aPage=-1', 'aPage'],
      ['?sortField=colour', 'sortField'],
      ['?sortDirection=up', 'sortDirection'],
      ['?page=0x10', 'page'],
      ['?page=1e3', 'page'],
      ['?page=%20', 'page'],
      ['?size=2.0', 'size'],
      ['?aSize=Infinity', 'aSize'],
    ])('rejects bad paging %s', async (query, path) => {
      const res = await search({}, query);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe(path);
    });

    it.each([
      ['projectName', 'ASC', ['s1', 's1', 's1', 's2', 's2', 's2']],
      ['branch', 'DESC', ['main', 'main', 'main', 'main', 'main', 'dev']],
      ['groupId', 'asc', ['org.search', 'org.search', 'org.search', 'org.search', 'org.search', 'org.search.sub']],
      ['artifact.groupId', 'desc', ['org.search.sub', 'org.search', 'org.search', 'org.search', 'org.search', 'org.search']],
      ['artifactId', 'ASC', ['lib%a', 'libXa', 'lib_a', 'lib_a', 'lib_a', 'star*lib']],
      ['artifact.artifactId', 'ASC', ['lib%a', 'libXa', 'lib_a', 'lib_a', 'lib_a', 'star*lib']],
      ['version', 'ASC', ['0.1', '0.2', '1.0.0', '1.1.0', '1.2.0-SNAPSHOT', '3.0.0']],
      ['artifact.version', 'DESC', ['3.0.0', '1.2.0-SNAPSHOT', '1.1.0', '1.0.0', '0.2', '0.1']],
      ['creationDate', 'ASC', ['1.0.0', '1.1.0', '1.2.0-SNAPSHOT', '3.0.0', '0.1', '0.2']],
      ['type', 'DESC', ['SERVICE', 'LIBRARY', 'LIBRARY', 'LIBRARY', 'LIBRARY', 'LIBRARY']],
    ])('sorts by %s %s', async (field, direction, expected) => {
      const res = await search({ groupId: 'org.search*' }, `?sortField=${field}&sortDirection=${direction}`);
      expect(res.status).toBe(200);
      const key = field.replace('artifact.', '') as string;
      const values = res.body.versionInformation.map((v: Record<string, string>) => (key === 'creationDate' ? v.version : v[key]));
      expect(values).toEqual(expected);
    });

    it.each([
      ['/v1/repositories/search?page=1&page=2', 'POST', 'page'],
      ['/v1/repositories/search?sortField=version&sortField=branch', 'POST', 'sortField'],
      ['/v1/repositories/latest?groupId=a&groupId=b&artifactId=c', 'GET', 'groupId'],
    ])('rejects a query parameter given twice: %s', async (path, method, name) => {
      const res = await server.request(method, path);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ path: name, message: 'given more than once' }]);
    });

    it('ignores empty sortField and sortDirection', async () => {
      const res = await search({ groupId: 'org.search*' }, '?sortField=&sortDirection=');
      expect(res.status).toBe(200);
      expect(versionsOf(res)).toEqual(['0.2', '0.1', '3.0.0', '1.2.0-SNAPSHOT', '1.1.0', '1.0.0']);
    });

    it('sorts by repositoryUrl with the records without one last, in both directions (docs/api.md)', async () => {
      const urls: [string, string | undefined][] = [['1', 'https://git.acme.test/b.git'], ['2', undefined], ['3', 'https://git.acme.test/a.git'], ['4', undefined]];
      for (const [minute, repositoryUrl] of urls) {
        const res = await publish(record({ repositoryUrl, creationDate: `2021-01-01T00:0${minute}:00Z` }, { groupId: 'nulls', version: minute }));
        expect(res.status).toBe(201);
      }
      // Equal (absent) URLs fall back to the default order: newest creationDate first.
      expect(versionsOf(await search({ groupId: 'nulls' }, '?sortField=repositoryUrl&sortDirection=ASC'))).toEqual(['3', '1', '4', '2']);
      expect(versionsOf(await search({ groupId: 'nulls' }, '?sortField=repositoryUrl&sortDirection=DESC'))).toEqual(['1', '3', '4', '2']);
    });

    it('sorts the version fixture of docs/api.md in exactly its order, equal versions by the default order', async () => {
      const fixture = [
        '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-M1', '1.0.0-rc.1',
        '1.0.0-RC2', '1.0.0-SNAPSHOT', '1.0.0', 'v1.0.0', '1.0', '1.0.1', '1.1', '1.2.0-SNAPSHOT', '1.2.0', '1.9.0',
        '1.10.0', '1.10.0.1', '2.0.0', '2019.03',
      ];
      // Publish in a scrambled order; the equal trio 1.0.0 = v1.0.0 = 1.0 gets ascending creation dates.
      const scrambled = [...fixture].sort((a, b) => (a.length * 7 + a.charCodeAt(a.length - 1)) % 11 - (b.length * 7 + b.charCodeAt(b.length - 1)) % 11);
      for (const version of scrambled) {
        const minute = { '1.0.0': '01', 'v1.0.0': '02', '1.0': '03' }[version] ?? '00';
        await publish({ projectName: 'fx', branch: 'main', artifact: { groupId: 'fixture', artifactId: 'order', version }, creationDate: `2021-01-01T00:${minute}:00Z` });
      }
      const asc = await search({ groupId: 'fixture' }, '?sortField=version&sortDirection=ASC&size=100');
      // Equal versions fall back to the default order: newest creationDate first.
      const expected = fixture.map((v) => (v === '1.0.0' ? '1.0' : v === '1.0' ? '1.0.0' : v));
      expect(versionsOf(asc)).toEqual(expected);
      const desc = await search({ groupId: 'fixture' }, '?sortField=version&sortDirection=DESC&size=100');
      expect(versionsOf(desc)).toEqual(['2019.03', '2.0.0', '1.10.0.1', '1.10.0', '1.9.0', '1.2.0', '1.2.0-SNAPSHOT', '1.1', '1.0.1', '1.0', 'v1.0.0', '1.0.0', '1.0.0-SNAPSHOT', '1.0.0-RC2', '1.0.0-rc.1', '1.0.0-M1', '1.0.0-beta.11', '1.0.0-beta.2', '1.0.0-beta', '1.0.0-alpha.1', '1.0.0-alpha']);
    });

    it('finds by uid and rejects a uid that is not one', async () => {
      const any = (await search({ groupId: 'org.search', artifactId: 'libXa' })).body.versionInformation[0];
      expect(versionsOf(await search({ uid: any.uid }))).toEqual(['3.0.0']);
      const bad = await search({ uid: 'nope' });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].path).toBe('uid');
      expect((await server.request('GET', '/v1/repositories/not-a-uuid')).status).toBe(400);
      expect((await server.request('GET', '/v1/repositories/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    });

    it('matches exactly: letter case and trailing spaces count, in the coordinates and in filters', async () => {
      // On a case-insensitive or space-padding collation these would be one record, replaced twice.
      for (const artifactId of ['Exact', 'exact']) {
        const res = await publish(record({ projectName: 'exact', latestVersion: true }, { groupId: 'org.exact', artifactId, version: '1.0' }));
        expect(res.status, artifactId).toBe(201);
      }
      // A publish with white space in a coordinate is refused now; one stored before the rule is kept apart still.
      expect((await publish(record({ projectName: 'exact', latestVersion: true }, { groupId: 'org.exact', artifactId: 'exact ', version: '1.0' }))).status).toBe(400);
      const padded = await upsertVersion(server.db, {
        projectName: 'exact', branch: 'main', groupId: 'org.exact', artifactId: 'exact ', version: '1.0',
        repositoryUrl: null, creationDate: new Date(), type: 'LIBRARY', latestVersion: true, description: null,
      });
      expect(padded?.created).toBe(true);
      const artifacts = async (filters: Record<string, unknown>) =>
        (await search(filters)).body.versionInformation.map((v: { artifactId: string }) => v.artifactId).sort();
      expect(await artifacts({ groupId: 'org.exact', artifactId: 'exact' })).toEqual(['exact']);
      expect(await artifacts({ groupId: 'org.exact', artifactId: 'Exact' })).toEqual(['Exact']);
      expect(await artifacts({ groupId: 'org.exact', artifactId: 'exact ' })).toEqual(['exact ']);
      expect(await artifacts({ groupId: 'org.exact', artifactId: 'ex*' })).toEqual(['exact', 'exact ']);
      expect(await artifacts({ groupId: 'ORG.EXACT' })).toEqual([]);
      expect(await artifacts({ groupId: 'ORG.*' })).toEqual([]);
      expect((await search({ groupId: 'org.exact', latestVersion: true })).body.page.totalElements).toBe(3);
      const latest = await server.request('GET', '/v1/repositories/latest?groupId=org.exact&artifactId=EXACT');
      expect(latest.status).toBe(404);
    });
  });
});
