// bcrypt hashing, and a dummy hash so unknown user names cost as much time as wrong passwords.
import bcrypt from 'bcrypt';
import { PASSWORD_MAX_BYTES } from '../../common/schemas/users.js';

export interface Passwords {
  hash(password: string): Promise<string>;
  /** Compares against the stored hash, or against the dummy hash when there is none. */
  verify(password: string, hash: string | undefined): Promise<boolean>;
}

export function createPasswords(cost: number): Passwords {
  const dummy = bcrypt.hash('repoadmin-dummy-password', cost);
  return {
    hash: (password) => bcrypt.hash(password, cost),
    async verify(password, hash) {
      // bcrypt compares only the first 72 bytes, so a longer password is never the one set (those are
      // refused): it is compared as an empty one, which costs the same time and never matches.
      const fits = Buffer.byteLength(password, 'utf8') <= PASSWORD_MAX_BYTES;
      const ok = await bcrypt.compare(fits ? password : '', hash ?? (await dummy));
      return ok && fits && hash !== undefined;
    },
  };
}
