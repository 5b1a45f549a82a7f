// Project tokens: `rpa_` and 32 random bytes in base64url, new each time; known by the lowercase
// hexadecimal SHA-256 of the whole text.
import { describe, expect, it } from 'vitest';
import { hashProjectToken, newProjectToken } from './project-tokens.js';

describe('project tokens', () => {
  it('are rpa_ and 32 random bytes in base64url, a new one each time', () => {
    const tokens = Array.from({ length: 50 }, () => newProjectToken());
    for (const token of tokens) {
      expect(token).toMatch(/^rpa_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('are known by the SHA-256 of the whole token, in lowercase hexadecimal, UTF-8 for any character', () => {
    expect(hashProjectToken('rpa_abc')).toBe('fa23553795bbe94bc7f2209308dbeebf5f7b167f77aaf7fe464e946c2920974e');
    expect(hashProjectToken('rpa_\u00e9')).toBe('516a88890cce8dc9e37e0953194ab7f11946b370db466f7198903a516f202865');
  });
});
