// What a token made by an ID token exchange may publish (checkOidcPublish) and how repository
// addresses compare (sameRepository): the rules as functions, each case one the HTTP tests of
// test/server/trusted-publishing.test.ts do not reach (a provider that names no repository, a
// publisher with several branch patterns, addresses written differently).
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../common/errors.js';
import type { OidcBinding } from '../db/tokens.js';
import { checkOidcPublish, sameRepository } from './publish.js';

const binding = (over: Partial<OidcBinding> = {}): OidcBinding => ({
  branch: 'main',
  publisherId: '00000000-0000-4000-8000-000000000001',
  repositoryUrl: 'https://git.example.com/acme/core',
  provenance: '{}',
  publisherBranches: ['main'],
  publisherEnvironments: null,
  ...over,
});

/** The 403's message, or undefined when the publish is let through. */
function refusal(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (!isAppError(error) || error.code !== 'forbidden') throw error;
    return error.message;
  }
}

describe('sameRepository', () => {
  it('ignores case, surrounding spaces, trailing slashes and a .git suffix', () => {
    const base = 'https://git.example.com/acme/core';
    for (const same of ['HTTPS://Git.Example.com/Acme/Core', ` ${base} `, `${base}/`, `${base}//`, `${base}.git`, `${base}.git/`, `${base}.GIT`]) {
      expect(sameRepository(same, base), same).toBe(true);
    }
  });

  it('tells apart addresses that differ anywhere else, a .git or slashes inside them included', () => {
    expect(sameRepository('https://git.example.com/acme/core', 'https://git.example.com/acme/core2')).toBe(false);
    expect(sameRepository('https://git.example.com/acme.gitx/core', 'https://git.example.com/acmex/core')).toBe(false);
    expect(sameRepository('https://git.example.com/acme//core', 'https://git.example.com/acme/core')).toBe(false);
    expect(sameRepository('https://git.example.com/acme/core', 'https:git.example.com/acme/core')).toBe(false);
    expect(sameRepository('https://git.example.com/acme/core.github', 'https://git.example.com/acme/corehub')).toBe(false);
  });
});

describe('checkOidcPublish', () => {
  it("lets a branch build's token publish to its branch only, whatever its publisher's patterns", () => {
    expect(refusal(() => checkOidcPublish(binding({ publisherBranches: ['release/*'] }), { branch: 'main' }))).toBeUndefined();
    expect(refusal(() => checkOidcPublish(binding(), { branch: 'develop' }))).toBe(
      'this token was made for branch "main" (the ref of its ID token): it may not publish to branch "develop"',
    );
  });

  it("lets a tag build's token publish to any branch one of its publisher's patterns matches, and refuses the rest saying which", () => {
    const tag = binding({ branch: null, publisherBranches: ['main', 'release/*'] });
    expect(refusal(() => checkOidcPublish(tag, { branch: 'main' }))).toBeUndefined();
    expect(refusal(() => checkOidcPublish(tag, { branch: 'release/2.0' }))).toBeUndefined();
    expect(refusal(() => checkOidcPublish(tag, { branch: 'develop' }))).toBe(
      'this token was made for a tag build: it may publish only to the branches its trusted publisher allows ("main", "release/*"), not to "develop"',
    );
    // A publisher gone since allows no branch.
    expect(refusal(() => checkOidcPublish(binding({ branch: null, publisherBranches: null }), { branch: 'main' }))).toMatch(/^this token was made for a tag build/);
  });

  it('stores the repository the ID token named, and refuses a record naming another', () => {
    expect(checkOidcPublish(binding(), { branch: 'main' })).toBe('https://git.example.com/acme/core');
    expect(checkOidcPublish(binding(), { branch: 'main', repositoryUrl: 'https://git.example.com/acme/core.git' })).toBe('https://git.example.com/acme/core.git');
    expect(refusal(() => checkOidcPublish(binding(), { branch: 'main', repositoryUrl: 'https://git.example.com/acme/other' }))).toBe(
      'this token was made for a build of https://git.example.com/acme/core: it may not publish a record of repositoryUrl "https://git.example.com/acme/other"',
    );
  });

  it('keeps the record\'s repository, or none, when the provider named none', () => {
    expect(checkOidcPublish(binding({ repositoryUrl: null }), { branch: 'main', repositoryUrl: 'https://git.example.com/any/thing' })).toBe('https://git.example.com/any/thing');
    expect(checkOidcPublish(binding({ repositoryUrl: null }), { branch: 'main' })).toBeNull();
  });
});
