// Which addresses a webhook may reach (docs/webhooks.md, "Addresses"): never loopback, link-local
// (cloud metadata included), unspecified or multicast, unless the operator's allow list names the
// network. The rule is checked on the address a request actually connects to (the `lookup` given to
// the HTTP request), so a name that resolves, or later re-resolves, to a refused address is refused.
import dns from 'node:dns';
import net from 'node:net';

const REFUSED: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fd00:ec2::254', 128, 'ipv6', 'cloud metadata'],
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['255.255.255.255', 32, 'ipv4', 'broadcast'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

/** An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 address it is. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
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

export function addressRules(allowNetworks: string[]): AddressRules {
  const allowed = blockList(allowNetworks);
  const refused = REFUSED.map(([address, prefix, family, reason]) => {
    const list = new net.BlockList();
    list.addSubnet(address, prefix, family);
    return { list, reason };
  });
  const refusal = (address: string): string | undefined => {
    const ip = plain(address);
    const family = net.isIPv6(ip) ? 'ipv6' : 'ipv4';
    if (allowed.check(ip, family)) return undefined;
    const hit = refused.find(({ list }) => list.check(ip, family));
    return hit && `${ip} is a ${hit.reason} address, which webhooks may not reach (--repoadmin_webhook_allow_networks)`;
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

/** The literal IP address of a URL's host, or undefined for a name. */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return net.isIP(host) ? host : undefined;
}
