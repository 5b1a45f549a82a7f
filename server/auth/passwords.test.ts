// Passwords: bcrypt at the configured cost; only the hash set for the password verifies, at every
// length bcrypt can tell apart, and a missing hash never does (not even the dummy's own password).
import { describe, expect, it } from 'vitest';
import { PASSWORD_MAX_BYTES } from '../../common/schemas/users.js';
import { createPasswords } from './passwords.js';

const passwords = createPasswords(4);

describe('passwords', () => {
  it('hashes with bcrypt at the configured cost and verifies only the password set', async () => {
    const hash = await passwords.hash('correct horse');
    expect(hash).toMatch(/^\$2b\$04\$/);
    expect(await passwords.verify('correct horse', hash)).toBe(true);
    expect(await passwords.verify('correct horsE', hash)).toBe(false);
    expect(await passwords.verify('', hash)).toBe(false);
  });

  it('never verifies against a missing hash, whatever the password', async () => {
    expect(await passwords.verify('repoadmin-dummy-password', undefined)).toBe(false);
    expect(await passwords.verify('anything', undefined)).toBe(false);
  });

  it(`verifies a password of exactly ${PASSWORD_MAX_BYTES} bytes, and refuses one a byte longer that bcrypt would take for it`, async () => {
    const longest = 'é'.repeat(PASSWORD_MAX_BYTES / 2);
    expect(Buffer.byteLength(longest)).toBe(PASSWORD_MAX_BYTES);
    const hash = await passwords.hash(longest);
    expect(await passwords.verify(longest, hash)).toBe(true);
    // bcrypt reads only the first 72 bytes: the longer one would match if it were compared.
    expect(await passwords.verify(`${longest}x`, hash)).toBe(false);
  });
});
