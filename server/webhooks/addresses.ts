// Which addresses a webhook may reach (docs/webhooks.md, "Addresses"): never loopback, link-local
// (cloud metadata included), unspecified or multicast, unless the operator's allow list names the
// network. The rule is checked on the address a request actually connects to (the `lookup` given to
// the HTTP request), so a name that resolves, or later re-resolves, to a refused address is refused;
// and on the URL when a webhook is made or changed, so that what every delivery would refuse is
// refused at once.
import dns from 'node:dns';
import net from 'node:net';
import { SETTINGS } from '../settings.js';

const REFUSED: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fd00:ec2::254', 128, 'ipv6', 'cloud metadata'],
  ['100.100.100.200', 32, 'ipv4', 'cloud metadata'],
  ['168.63.129.16', 32, 'ipv4', 'cloud metadata'],
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['255.255.255.255', 32, 'ipv4', 'broadcast'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

/** Who the rules are for, and the server setting that lifts a refusal, as a refusal names them. */
export interface RulesFor {
  /** `webhooks may not reach`. */
  refused: string;
  setting: string;
}

const settingName = ({ arg, env }: { arg: string; env: string[] }) => `the server setting --${arg} (${env.join(', ')})`;

/** Webhooks' addresses. */
export const WEBHOOK_ADDRESSES: RulesFor = { refused: 'webhooks may not reach', setting: settingName(SETTINGS.webhookAllowNetworks) };
/** OpenID Connect issuers and their key sets (docs/api.md, "Trusted publishing"): the same rules. */
export const ISSUER_ADDRESSES: RulesFor = { refused: 'an OpenID Connect issuer or its keys may not be at', setting: settingName(SETTINGS.oidcAllowNetworks) };

/** How long making a webhook waits for its host name to resolve; past that, each delivery checks it. */
const CREATION_LOOKUP_MS = 2_000;

/** The 16 bytes of an IPv6 address (`::`, a dotted IPv4 tail and all). */
function ipv6Bytes(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const hex = dotted ? `${address.slice(0, dotted.index)}${((+dotted[1]! << 8) | +dotted[2]!).toString(16)}:${((+dotted[3]! << 8) | +dotted[4]!).toString(16)}` : address;
  const [head, tail] = hex.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const words = tail === undefined ? groups(head) : [...groups(head), ...Array<number>(8 - groups(head).length - groups(tail).length).fill(0), ...groups(tail)];
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

/**
 * An IPv6 address that carries an IPv4 address is judged as that IPv4 address: IPv4-mapped
 * (`::ffff:127.0.0.1`), IPv4-compatible (`::127.0.0.1`, which the URL parser writes `::7f00:1`) and
 * the NAT64 prefix 64:ff9b::/96. `::` and `::1` stay themselves.
 */
function plain(address: string): string {
  if (!net.isIPv6(address)) return address;
  const bytes = ipv6Bytes(address);
  const prefix = bytes.slice(0, 12).join('.');
  const ipv4 = bytes.slice(12).join('.');
  const mapped = prefix === '0.0.0.0.0.0.0.0.0.0.255.255';
  const nat64 = prefix === '0.100.255.155.0.0.0.0.0.0.0.0';
  const compatible = prefix === '0.0.0.0.0.0.0.0.0.0.0.0' && ipv4 !== '0.0.0.0' && ipv4 !== '0.0.0.1';
  return mapped || nat64 || compatible ? ipv4 : address;
}

function blockList(networks: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const cidr of networks) {
    const [address, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(address, Number(prefix), net.isIPv6(address) ? 'ipv6' : 'ipv4');
  }
  return list;
}

export interface AddressRules {
  /** Why a webhook may not connect to this IP address; undefined when it may. */
  refusal(address: string): string | undefined;
  /** A dns.lookup that yields only addresses the rules allow, failing with the reason otherwise. */
  lookup: net.LookupFunction;
}

/** Addresses whose verdict addressRules keeps. */
const JUDGED_KEPT = 1_024;

export function addressRules(allowNetworks: string[], rulesFor: RulesFor = WEBHOOK_ADDRESSES): AddressRules {
  const allowed = blockList(allowNetworks);
  const refused = REFUSED.map(([address, prefix, family, reason]) => {
    const list = new net.BlockList();
    list.addSubnet(address, prefix, family);
    return { list, reason };
  });
  const judge = (address: string): string | undefined => {
    const ip = plain(address);
    const family = net.isIPv6(ip) ? 'ipv6' : 'ipv4';
    if (allowed.check(ip, family)) return undefined;
    const hit = refused.find(({ list }) => list.check(ip, family));
    return hit && `${ip} is a ${hit.reason} address, which ${rulesFor.refused} unless ${rulesFor.setting} names its network`;
  };
  // The rules never change, and a sender asks about the same few addresses at every delivery: each
  // answer is kept (up to JUDGED_KEPT addresses), as a BlockList check makes a SocketAddress per list.
  const judged = new Map<string, string | undefined>();
  const refusal = (address: string): string | undefined => {
    if (judged.has(address)) return judged.get(address);
    const verdict = judge(address);
    if (judged.size >= JUDGED_KEPT) judged.clear();
    judged.set(address, verdict);
    return verdict;
  };
  const lookup: net.LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const usable = addresses.filter((a) => refusal(a.address) === undefined);
      if (usable.length === 0) {
        const reason = refusal(addresses[0]!.address)!;
        return callback(Object.assign(new Error(`${hostname} resolves to ${reason.replace(/^\S+ is/, 'an address that is')}`), { code: 'EREFUSEDADDRESS' }), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
  return { refusal, lookup };
}

/** Whether `address` is in one of the CIDR `networks` (an IPv4 address carried in IPv6 counts as itself). */
export function inNetworks(networks: string[], address: string): boolean {
  const ip = plain(address);
  return blockList(networks).check(ip, net.isIPv6(ip) ? 'ipv6' : 'ipv4');
}

/**
 * Why a webhook may not have this URL under the rules: its literal address, or every address its
 * host name resolves to now, is refused, as every delivery to it would be. Undefined when it may, and
 * when the name does not resolve, or not within CREATION_LOOKUP_MS (each delivery checks it again).
 */
export async function urlRefusal(rules: AddressRules, url: URL): Promise<string | undefined> {
  const literal = literalAddress(url);
  if (literal) return rules.refusal(literal);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const resolved = new Promise<string | undefined>((resolve) => {
    rules.lookup(url.hostname, { all: true }, (error) => resolve(error && (error as NodeJS.ErrnoException).code === 'EREFUSEDADDRESS' ? error.message : undefined));
  });
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), CREATION_LOOKUP_MS);
  });
  try {
    return await Promise.race([resolved, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The literal IP address of a URL's host, or undefined for a name. */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return net.isIP(host) ? host : undefined;
}
