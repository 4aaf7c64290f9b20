/**
 * Which `Host` headers the ops server answers. A page on evil.example that rebinds its
 * DNS to this machine reaches the server with `Host: evil.example`, which no browser
 * lets the page forge; answering only known names is what stops DNS rebinding. The
 * dashboard knows loopback, its bound address and ROWBRIDGE_DASHBOARD_HOSTS; the probes
 * also know ROWBRIDGE_OPS_HOSTS and, bound to every interface, this machine's own
 * addresses, which is the Host an orchestrator or a scraper calling by IP sends.
 */
import { networkInterfaces } from 'node:os';

/** Options of {@link createHostAllowList}. */
export interface HostAllowListOptions {
  /** The address the server binds; a specific one is allowed as a Host. */
  bindHost: string;
  /** Further names or addresses, comma-separated, as the settings write them. */
  names?: Array<string | undefined>;
  /** Bound to 0.0.0.0 or `::`, allow the addresses of this machine's interfaces. @defaultValue false */
  ownAddresses?: boolean;
}

/** A Host allow-list. */
export interface HostAllowList {
  /** Whether a Host header (or an origin's host) names this server. */
  allows(host: string): boolean;
}

/** The host name of a Host header or origin, lower-cased, without port; IPv6 in brackets. */
export function hostName(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('[')) return v.slice(0, v.indexOf(']') + 1);
  // A bare IPv6 address (a bind address or a setting), not host:port.
  if ((v.match(/:/g) ?? []).length > 1) return `[${v.split('%')[0] ?? v}]`;
  return v.replace(/:\d*$/, '');
}

/** Every entry of comma-separated settings, as host names. */
export function hostNames(texts: Array<string | undefined>): string[] {
  return texts
    .flatMap((text) => (text ?? '').split(','))
    .map((e) => e.trim())
    .filter(Boolean)
    .map(hostName);
}

function isWildcard(name: string): boolean {
  return name === '0.0.0.0' || name === '[::]';
}

export function createHostAllowList(options: HostAllowListOptions): HostAllowList {
  const hosts = new Set(['localhost', '127.0.0.1', '[::1]']);
  const bound = hostName(options.bindHost);
  if (!isWildcard(bound)) hosts.add(bound);
  for (const name of hostNames(options.names ?? [])) hosts.add(name);
  if (options.ownAddresses === true && isWildcard(bound)) {
    for (const info of Object.values(networkInterfaces()).flat()) {
      if (info !== undefined) hosts.add(hostName(info.address));
    }
  }
  return { allows: (host) => hosts.has(hostName(host)) };
}
