// bcrypt hashing, and a dummy hash so unknown user names cost as much time as wrong passwords.
import bcrypt from 'bcrypt';

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
      const ok = await bcrypt.compare(password, hash ?? (await dummy));
      return ok && hash !== undefined;
    },
  };
}
