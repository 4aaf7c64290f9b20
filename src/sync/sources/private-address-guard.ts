/**
 * The connector of an http source under ROWBRIDGE_SOURCE_DENY_PRIVATE: it refuses
 * loopback, private, link-local and unspecified addresses. The check sits in the DNS
 * lookup that feeds the socket, so the address checked is the address connected to: a
 * name that resolves to a public address for a check and to 127.0.0.1 a moment later
 * (DNS rebinding) cannot slip between the two. IP literals skip the lookup in Node, so
 * they are checked before it. Every connection of the read goes through here, whatever
 * URL led to it.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';

/** The code of the refusal; http-request.ts turns it into a message naming the setting. */
export const PRIVATE_ADDRESS_CODE = 'ERR_ROWBRIDGE_PRIVATE_ADDRESS';

const denied = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT, internal to a provider
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, where cloud metadata services answer
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  denied.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 127], // :: and ::1
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
] as const)
  denied.addSubnet(network, prefix, 'ipv6');

/** Whether a source may not connect to `address` (an IPv4 or IPv6 literal). */
function isDenied(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return denied.check(bare, 'ipv4');
  if (family !== 6) return true;
  // An IPv4-mapped address (::ffff:127.0.0.1, or ::ffff:7f00:1 as URLs write it) is the IPv4 one.
  const mapped = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(bare);
  if (mapped !== null) {
    const v4 =
      mapped[1] ??
      [parseInt(mapped[2] ?? '0', 16), parseInt(mapped[3] ?? '0', 16)]
        .flatMap((word) => [word >> 8, word & 0xff])
        .join('.');
    return denied.check(v4, 'ipv4');
  }
  return denied.check(bare, 'ipv6');
}

function refusal(host: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`${host} is a loopback, private or link-local address`);
  err.code = PRIVATE_ADDRESS_CODE;
  return err;
}

/** dns.lookup that fails when any address of the name is denied. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err !== null) {
      callback(err, '', 0);
      return;
    }
    if (addresses.some((entry) => isDenied(entry.address))) {
      callback(refusal(hostname), '', 0);
      return;
    }
    const first = addresses[0];
    if (options.all === true) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    else callback(null, first?.address ?? '', first?.family ?? 4);
  });
};

/** An undici connector (Agent `connect`) that refuses denied addresses. */
export function createPrivateAddressGuard(connectTimeoutMs: number): buildConnector.connector {
  const connect = buildConnector({ timeout: connectTimeoutMs, lookup: guardedLookup });
  return (options, callback) => {
    if (isIP(options.hostname.replace(/^\[|\]$/g, '')) !== 0 && isDenied(options.hostname)) {
      callback(refusal(options.hostname), null);
      return;
    }
    connect(options, callback);
  };
}
