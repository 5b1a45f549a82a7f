// Project tokens: `rpa_` and 32 random bytes, known to the server only by their SHA-256. A plain hash
// is enough (no bcrypt): the token is random and long, so there is nothing to guess from its hash,
// and checking it costs the same microseconds on every request.
import { createHash, randomBytes } from 'node:crypto';
import { TOKEN_PREFIX, TOKEN_RANDOM_BYTES } from '../../common/schemas/tokens.js';

export function newProjectToken(): string {
  return TOKEN_PREFIX + randomBytes(TOKEN_RANDOM_BYTES).toString('base64url');
}

/** Lowercase hexadecimal SHA-256 of the whole token, as the tokens table keeps it. */
export function hashProjectToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
