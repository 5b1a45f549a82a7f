import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeApi, fakeDeps } from '../../../test/cli/fakes.js';
import { withoutUserInfo } from '../../../common/urls.js';
import { branchFromEnv, repositoryUrlFromEnv } from './environment.js';
import { runPublish } from './publish.js';

const UID = '08880a31-5d7a-4abf-a89e-f2aa9e43da4f';
const coordinates = { group: 'com.acme', artifact: 'app', version: '1.2.3', latest: false };

describe('build server environment', () => {
  it('finds the branch in the variables of Jenkins, GitLab and GitHub, in that order', () => {
    expect(branchFromEnv({ GIT_BRANCH: 'origin/feature/x' })).toEqual({ value: 'feature/x', from: 'GIT_BRANCH' });
    expect(branchFromEnv({ GIT_BRANCH: 'refs/heads/main' })?.value).toBe('main');
    expect(branchFromEnv({ BRANCH_NAME: 'PR-7', GIT_BRANCH: 'origin/main' })?.value).toBe('PR-7');
    expect(branchFromEnv({ CI_COMMIT_REF_NAME: 'develop', GITHUB_REF_NAME: 'other' })?.value).toBe('develop');
    expect(branchFromEnv({ GITHUB_REF_NAME: 'release' })?.value).toBe('release');
    expect(branchFromEnv({})).toBeUndefined();
  });

  it('finds the repository address and strips user info', () => {
    expect(repositoryUrlFromEnv({ GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/app' })).toBe('https://github.com/acme/app');
    expect(repositoryUrlFromEnv({ GIT_URL: 'git@host:acme/app.git', CI_PROJECT_URL: 'https://gitlab/acme/app' })).toBe('git@host:acme/app.git');
    expect(withoutUserInfo('https://ci:s3cr3t@git.example.com/acme/app.git')).toBe('https://git.example.com/acme/app.git');
    expect(withoutUserInfo('git@host:acme/app.git')).toBe('git@host:acme/app.git');
    expect(withoutUserInfo('https://ci:p@ss@git.example.com/acme/app.git?x=a@b')).toBe('https://git.example.com/acme/app.git?x=a@b');
  });
});

describe('runPublish', () => {
  it('fills branch, address, project and date, and prints the uid', async () => {
    const api = fakeApi({
      projectName: async () => 'shop',
      publish: async () => ({ _status: true, uid: UID, created: true }),
    });
    const env = { GIT_BRANCH: 'origin/main', GIT_URL: 'https://ci:tok@git.example.com/acme/app.git' };
    const report = await runPublish({ ...coordinates, latest: true }, fakeDeps({ api, env }));
    expect(api.calls.find((c) => c.name === 'publish')?.args[0]).toEqual({
      projectName: 'shop',
      branch: 'main',
      artifact: { groupId: 'com.acme', artifactId: 'app', version: '1.2.3' },
      repositoryUrl: 'https://git.example.com/acme/app.git',
      creationDate: '2026-11-21T10:00:00.000+0000',
      type: undefined,
      latestVersion: true,
      description: undefined,
    });
    expect(report.lines).toEqual([UID]);
    expect(report.notes?.[0]).toBe('Created com.acme:app:1.2.3 (project shop, branch main, marked latest).');
  });

  it("asks for the user's project only when neither a flag nor the record file names one", async () => {
    const api = fakeApi({
      projectName: async () => 'shop',
      publish: async () => ({ _status: true, uid: UID, created: false }),
    });
    const report = await runPublish({ ...coordinates, branch: 'main' }, fakeDeps({ api }));
    expect(api.calls.map((c) => c.name)).toEqual(['projectName', 'publish']);
    expect(report.notes?.[0]).toMatch(/^Updated com.acme:app:1.2.3 \(project shop,/);
    await runPublish({ ...coordinates, branch: 'main', project: 'given' }, fakeDeps({ api }));
    expect(api.calls.map((c) => c.name)).toEqual(['projectName', 'publish', 'publish']);
  });

  it('an administrator must pass --project', async () => {
    const api = fakeApi({ projectName: async () => null });
    await expect(runPublish({ ...coordinates, branch: 'main' }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--project') });
  });

  it('a missing branch names the flag and the variables', async () => {
    await expect(runPublish({ ...coordinates, project: 'p' }, fakeDeps())).rejects.toMatchObject({ code: 'usage', message: expect.stringMatching(/--branch.*BRANCH_NAME/) });
  });

  it('rejects a date without an offset before calling the server', async () => {
    const api = fakeApi();
    await expect(runPublish({ ...coordinates, project: 'p', branch: 'b', date: '2019-03-02T20:30:35' }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'usage' });
    expect(api.calls).toEqual([]);
  });

  it('completes a record file with flags, which win', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'publish-'));
    const file = join(dir, 'record.json');
    await writeFile(file, JSON.stringify({ projectName: 'shop', branch: 'dev', artifact: { groupId: 'g', artifactId: 'a', version: '0.1' }, type: 'DOCKER', description: 'from file' }));
    const api = fakeApi({ publish: async () => ({ _status: true, uid: UID, created: true }) });
    await runPublish({ file, version: '0.2', latest: false, descriptionFile: '-' }, fakeDeps({ api, stdin: '# Notes' }));
    expect(api.calls[0]?.args[0]).toMatchObject({ projectName: 'shop', branch: 'dev', artifact: { groupId: 'g', artifactId: 'a', version: '0.2' }, type: 'DOCKER', description: '# Notes' });
  });

  it('reads latestVersion of a record file as older clients write it, "false" included', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'publish-'));
    for (const [value, expected] of [['false', undefined], ['true', true], [false, undefined], [true, true]] as const) {
      const file = join(dir, `record-${String(value)}-${typeof value}.json`);
      await writeFile(file, JSON.stringify({ projectName: 'shop', branch: 'dev', artifact: { groupId: 'g', artifactId: 'a', version: '1' }, latestVersion: value }));
      const api = fakeApi({ publish: async () => ({ _status: true, uid: UID, created: true }) });
      const result = await runPublish({ file, latest: false }, fakeDeps({ api }));
      expect(api.calls[0]?.args[0]).toMatchObject({ latestVersion: expected });
      expect(JSON.stringify(result)).toContain(expected ? 'marked latest' : '(project shop, branch dev)');
    }
  });
});
