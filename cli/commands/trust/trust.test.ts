import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../common/errors.js';
import type { TrustedPublisher } from '../../../common/schemas/trust.js';
import { fakeApi, fakeDeps } from '../../../test/cli/fakes.js';
import { printReport } from '../../output/index.js';
import { parseAddFlags, parseClaims, runTrustAdd } from './add.js';
import { runTrustList } from './list.js';
import { runTrustRemove } from './remove.js';

const ID = '5d7c4a0e-8f3b-4b3e-9a61-0c2d1e4f5a6b';
const publisher = (overrides: Partial<TrustedPublisher> = {}): TrustedPublisher => ({
  id: ID,
  projectName: 'shop',
  provider: 'github',
  issuer: 'https://token.actions.githubusercontent.com',
  audience: 'repoadmin',
  claims: { repository: 'acme/shop' },
  branches: ['main'],
  environments: null,
  refClaim: null,
  jwks: null,
  description: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
  ...overrides,
});
const flags = (overrides: Partial<Parameters<typeof parseAddFlags>[0]> = {}) => ({
  project: 'shop',
  provider: 'github',
  claim: ['repository=acme/shop'],
  branch: [],
  environment: [],
  ...overrides,
});

describe('trust add', () => {
  it('sends the flags as the request, leaving out what the server defaults', async () => {
    const api = fakeApi({ createTrustedPublisher: async () => publisher() });
    const opts = parseAddFlags(flags({ claim: ['repository=acme/shop', 'repository_owner_id=99', 'workflow_ref=acme/shop/.github/workflows/*@refs/heads/main'], branch: ['main', 'release/*'] }));
    const report = await runTrustAdd(opts, fakeDeps({ api }));
    expect(api.calls[0]?.args[0]).toEqual({
      projectName: 'shop',
      provider: 'github',
      claims: { repository: 'acme/shop', repository_owner_id: '99', workflow_ref: 'acme/shop/.github/workflows/*@refs/heads/main' },
      branches: ['main', 'release/*'],
    });
    expect(report.json).toEqual(publisher());
    expect(report.notes?.join('\n')).toContain(`publisher ${ID}`);
    expect(report.notes?.join('\n')).toContain('audience (aud) must be repoadmin');
  });

  it('advises pinning the owner id of a github repository named only by its name', async () => {
    const api = fakeApi({ createTrustedPublisher: async () => publisher() });
    const named = await runTrustAdd(parseAddFlags(flags()), fakeDeps({ api }));
    expect(named.notes?.join('\n')).toContain('repository_owner_id');
    const pinned = fakeApi({ createTrustedPublisher: async () => publisher({ claims: { repository_id: '42' } }) });
    expect((await runTrustAdd(parseAddFlags(flags({ claim: ['repository_id=42'] })), fakeDeps({ api: pinned }))).notes?.join('\n')).not.toContain('repository_owner_id');
  });

  it('reads the issuer, ref claim, environments and an inline JWK Set for a jenkins publisher', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'repoadmin-jwks-'));
    const file = path.join(dir, 'jwks.json');
    const jwks = { keys: [{ kty: 'RSA', kid: 'k1', n: 'AQAB', e: 'AQAB' }] };
    await writeFile(file, JSON.stringify(jwks));
    const api = fakeApi({ createTrustedPublisher: async () => publisher({ provider: 'jenkins' }) });
    const opts = parseAddFlags(
      flags({ provider: 'jenkins', issuer: 'https://ci.example.com/oidc', refClaim: 'branch', jwksFile: file, claim: ['sub=https://ci.example.com/job/shop/'], environment: ['staging'] }),
    );
    await runTrustAdd(opts, fakeDeps({ api }));
    expect(api.calls[0]?.args[0]).toMatchObject({ provider: 'jenkins', issuer: 'https://ci.example.com/oidc', refClaim: 'branch', jwks, environments: ['staging'] });
    await expect(runTrustAdd({ ...opts, jwksFile: path.join(dir, 'missing.json') }, fakeDeps({ api }))).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('--jwks-file: cannot read') });
  });

  it('refuses bad flags as usage errors before anything is sent', () => {
    expect(() => parseAddFlags(flags({ project: undefined }))).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringContaining('--project') }));
    expect(() => parseAddFlags(flags({ provider: 'circleci' }))).toThrow(expect.objectContaining({ code: 'usage', message: '--provider must be one of github, gitlab, jenkins, generic, not "circleci"' }));
    expect(() => parseAddFlags(flags({ claim: [] }))).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringContaining('missing --claim') }));
    expect(() => parseClaims(['repository'])).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringContaining('NAME=VALUE') }));
    expect(() => parseClaims(['=x'])).toThrow(expect.objectContaining({ code: 'usage' }));
    expect(() => parseClaims(['a=1', 'a=2'])).toThrow(expect.objectContaining({ code: 'usage', message: '--claim a is given twice' }));
    // The value keeps its own = signs.
    expect(parseClaims(['sub=a=b'])).toEqual({ sub: 'a=b' });
  });

  it('names the flag in what the schema or the server refuses', async () => {
    const api = fakeApi({
      createTrustedPublisher: async () => {
        throw new AppError('validation', 'issuer: must be https', { errors: [{ path: 'issuer', message: 'must be https' }] });
      },
    });
    await expect(runTrustAdd(parseAddFlags(flags({ issuer: 'not a url' })), fakeDeps({ api }))).rejects.toMatchObject({ code: 'validation', message: expect.stringMatching(/^--issuer: /) });
    expect(api.calls).toEqual([]);
    await expect(runTrustAdd(parseAddFlags(flags({ issuer: 'http://10.0.0.1' })), fakeDeps({ api }))).rejects.toMatchObject({ message: '--issuer: must be https' });
  });
});

describe('trust list and remove', () => {
  it('lists as a table on a terminal, tab-separated when piped, the answer with --json', async () => {
    const answer = { publishers: [publisher({ claims: { repository: 'acme/shop', repository_owner_id: '99' }, branches: ['main', 'release/*'], environments: ['prod'] })] };
    const api = fakeApi({ listTrustedPublishers: async () => answer });
    const report = await runTrustList({ project: 'shop' }, fakeDeps({ api }));
    expect(api.calls[0]?.args[0]).toEqual({ projectName: 'shop' });
    expect(report.json).toEqual(answer);
    const piped = fakeDeps({ api });
    await printReport(report, piped);
    expect(piped.io.stdoutText()).toBe(`${ID}\tshop\tgithub\thttps://token.actions.githubusercontent.com\trepository=acme/shop repository_owner_id=99\tmain release/*\tprod\n`);
    const terminal = fakeDeps({ api, tty: true, settings: { color: false } });
    await printReport(report, terminal);
    expect(terminal.io.stdoutText()).toMatch(/^ID\s+PROJECT\s+PROVIDER/);
    const json = fakeDeps({ api, settings: { json: true } });
    await printReport(report, json);
    expect(JSON.parse(json.io.stdoutText())).toEqual(answer);
  });

  it('says when there are none', async () => {
    const report = await runTrustList({}, fakeDeps({ api: fakeApi({ listTrustedPublishers: async () => ({ publishers: [] }) }) }));
    expect(report.notes).toEqual(['No trusted publishers.']);
  });

  it('removes by id; a missing one is the server\'s not_found (exit 3)', async () => {
    const api = fakeApi({ removeTrustedPublisher: async () => undefined });
    const report = await runTrustRemove({ id: ID }, fakeDeps({ api }));
    expect(api.calls).toEqual([{ name: 'removeTrustedPublisher', args: [ID] }]);
    expect(report.notes?.[0]).toContain('no longer work');
    const missing = fakeApi({
      removeTrustedPublisher: async () => {
        throw new AppError('not_found', 'no trusted publisher with id x');
      },
    });
    await expect(runTrustRemove({ id: 'x' }, fakeDeps({ api: missing }))).rejects.toMatchObject({ code: 'not_found' });
  });
});
