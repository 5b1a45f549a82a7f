import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitSourceId, isOwnedBy, localSourceId, markerOf, markerSource, normalizeRemote, tokenFingerprint, withMarker } from './source.js';

describe('source ids', () => {
  it.each([
    ['git@GitHub.com:Org/jobs.git', 'github.com/Org/jobs'],
    ['ssh://git@github.com/Org/jobs.git', 'github.com/Org/jobs'],
    ['https://github.com/Org/jobs.git', 'github.com/Org/jobs'],
    ['https://user:s3cret@GITHUB.com/Org/jobs/', 'github.com/Org/jobs'],
    ['https://oauth2:glpat-xyz@gitlab.example.com:8443/group/sub/jobs.git', 'gitlab.example.com:8443/group/sub/jobs'],
    ['ssh://git@github.com:22/Org/jobs.git', 'github.com/Org/jobs'],
    ['https://github.com:443/Org/jobs.git', 'github.com/Org/jobs'],
    ['http://git.example.com:80/Org/jobs.git', 'git.example.com/Org/jobs'],
    ['file:///srv/git/jobs.git', '/srv/git/jobs'],
    ['/srv/git/jobs', '/srv/git/jobs'],
  ])('normalises %s to %s', (address, id) => expect(normalizeRemote(address)).toBe(id));

  it('gives an https and an ssh clone of one repository the same id, without credentials', () => {
    const https = gitSourceId('https://ci-bot:token123@git.example.com/team/jobs.git', 'ci/jenkins-dsl-jobs.json');
    expect(https).toBe('ci/jenkins-dsl-jobs.json@git.example.com/team/jobs');
    expect(gitSourceId('git@git.example.com:team/jobs.git', 'ci/jenkins-dsl-jobs.json')).toBe(https);
    expect(https).not.toContain('token123');
  });

  it('uses the git remote of a local file, else its absolute path', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'repoadmin-source-')));
    try {
      await writeFile(join(dir, 'jenkins-dsl-jobs.json'), '{}');
      expect(await localSourceId(join(dir, 'jenkins-dsl-jobs.json'))).toBe(join(dir, 'jenkins-dsl-jobs.json'));
      execFileSync('git', ['init', '-q', dir]);
      execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', 'git@git.example.com:team/jobs.git']);
      expect(await localSourceId(join(dir, 'jenkins-dsl-jobs.json'))).toBe('jenkins-dsl-jobs.json@git.example.com/team/jobs');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes and reads the ownership marker at the end of a description', () => {
    expect(withMarker('', 's', 'job')).toBe('Managed by repoadmin from s (item job): edits made in Jenkins are overwritten by the next apply.');
    const description = withMarker('Nightly\nbuild', 'a.json@host/x', 'team/nightly build');
    expect(description).toBe('Nightly\nbuild\nManaged by repoadmin from a.json@host/x (item team/nightly build): edits made in Jenkins are overwritten by the next apply.');
    expect(markerSource(description)).toBe('a.json@host/x');
    expect(markerOf(description)).toEqual({ sourceId: 'a.json@host/x', item: 'team/nightly build', tokenFingerprint: undefined });
    expect(markerSource(`${description}\n`)).toBe('a.json@host/x');
    expect(markerSource('made by hand')).toBeUndefined();
    expect(markerSource('<!-- managed by repoadmin; source: s --> and then more')).toBeUndefined();
    expect(markerSource(null)).toBeUndefined();
    // A marker written before items were named in it.
    expect(markerOf('<!-- managed by repoadmin; source: s -->')).toEqual({ sourceId: 's', item: undefined, tokenFingerprint: undefined });
  });

  it('owns an item by source and by its own name: a copy made in Jenkins carries another name', () => {
    const marker = withMarker('Builds', 'a.json@host/x', 'team/App');
    expect(isOwnedBy('a.json@host/x', 'team/App', marker)).toBe(true);
    expect(isOwnedBy('a.json@host/x', 'TEAM/app', marker)).toBe(true);
    expect(isOwnedBy('a.json@host/x', 'team/copy-of-App', marker)).toBe(false);
    expect(isOwnedBy('b.json@host/y', 'team/App', marker)).toBe(false);
    expect(isOwnedBy('a.json@host/x', 'anything', '<!-- managed by repoadmin; source: a.json@host/x -->')).toBe(true);
    expect(isOwnedBy('a.json@host/x', 'team/App', 'made by hand')).toBe(false);
  });

  it('reads only the last marker, even when the description itself quotes one', () => {
    const quoted = withMarker('Moved from the old jobs:\n<!-- managed by repoadmin; source: old.json@host/old -->', 'a.json@host/x', 'job');
    expect(markerSource(quoted)).toBe('a.json@host/x');
    expect(markerSource('see <!-- managed by repoadmin; source: old.json@host/old --> <!-- managed by repoadmin; source: s -->')).toBe('s');
  });

  it('records a fingerprint of the trigger token in the marker, never the token', () => {
    const token = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const description = withMarker('Deploys', 'a.json@host/x', 'deploy', token);
    expect(description).toBe(`Deploys\nManaged by repoadmin from a.json@host/x (item deploy; trigger token sha256 ${tokenFingerprint(token)}): edits made in Jenkins are overwritten by the next apply.`);
    expect(description).not.toContain('3f2504e0');
    expect(tokenFingerprint(token)).toMatch(/^[0-9a-f]{16}$/);
    expect(tokenFingerprint(token)).not.toBe(tokenFingerprint('9b2c1d7e-5a4f-4e3b-8c2d-1f0e9d8c7b6a'));
    expect(markerOf(description)).toEqual({ sourceId: 'a.json@host/x', item: 'deploy', tokenFingerprint: tokenFingerprint(token) });
    expect(markerOf('<!-- managed by repoadmin; source: s; trigger token sha256: 0123456789abcdef -->')).toEqual({ sourceId: 's', item: undefined, tokenFingerprint: '0123456789abcdef' });
    expect(markerOf(withMarker('', 's', 'job'))).toEqual({ sourceId: 's', item: 'job', tokenFingerprint: undefined });
  });

  it('reads the sentence marker as it reads the comment markers written before it; the last one counts', () => {
    const sentence = withMarker('Builds (nightly)', 'a.json@host/x', 'team/app (v2)', '3f2504e0-4f89-41d3-9a0c-0305e82c3301');
    expect(markerOf(sentence)).toEqual({ sourceId: 'a.json@host/x', item: 'team/app (v2)', tokenFingerprint: tokenFingerprint('3f2504e0-4f89-41d3-9a0c-0305e82c3301') });
    expect(markerOf(`${withMarker('', 'old.json@host/old', 'job')}\n${withMarker('', 's', 'job')}`)?.sourceId).toBe('s');
    expect(markerOf('<!-- managed by repoadmin; source: s; item: job -->')).toEqual({ sourceId: 's', item: 'job', tokenFingerprint: undefined });
    expect(markerOf(`${withMarker('', 's', 'job')} and then more`)).toBeUndefined();
  });
});
