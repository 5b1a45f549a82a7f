// Standard Webhooks signatures (https://www.standardwebhooks.com/, "Signature scheme"): HMAC-SHA256
// keyed with the base64-decoded secret after `whsec_`, over "{webhook-id}.{webhook-timestamp}.{body}",
// sent as `v1,<base64>`; during a rotation, one entry per secret, space-separated.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new secret: `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** One `v1,...` signature of a message with one secret. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per secret given. */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => signature(secret, id, timestamp, body)).join(' ');
}
