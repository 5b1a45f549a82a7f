// Parsing the webhook settings (server/config.ts): a retry schedule and a list of networks.
import net from 'node:net';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `5s,5m,30m,2h`: the waits in milliseconds; at least one, each from 1 ms to 7 days. */
export function parseDurations(text: string): number[] {
  const waits = text.split(',').map((part) => {
    const m = /^\s*(\d{1,9})(ms|s|m|h|d)\s*$/.exec(part);
    const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
    if (!(ms >= 1 && ms <= 7 * UNIT_MS.d!)) throw new Error(`"${part.trim()}" is not a wait such as 5s, 5m or 2h (at most 7d)`);
    return ms;
  });
  if (waits.length > 20) throw new Error('at most 20 retries');
  return waits;
}

/** `127.0.0.0/8,::1/128`: each a CIDR network, checked. */
export function parseNetworks(text: string): string[] {
  return text.split(',').map((part) => {
    const cidr = part.trim();
    const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr);
    const family = m ? net.isIP(m[1]!) : 0;
    if (!m || family === 0 || Number(m[2]) > (family === 4 ? 32 : 128)) {
      throw new Error(`"${cidr}" is not a network such as 127.0.0.0/8 or fd00::/8`);
    }
    return cidr;
  });
}
