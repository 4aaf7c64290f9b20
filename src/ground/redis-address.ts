/**
 * Where a REDIS_URL points, as messages show it: `host:port`, or the nodes of a cluster
 * URL (`redis+cluster://h1:p1,h2:p2`) joined by commas. Never the user, password or
 * database; a URL that cannot be read is named by its variable instead.
 */
export function redisAddress(url: string): string {
  const scheme = /^([a-z+]+):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) return 'the address in REDIS_URL';
  if (scheme.endsWith('+cluster')) {
    const rest = url.slice(scheme.length + 3);
    const hosts = rest.slice(rest.lastIndexOf('@') + 1).split('/')[0] ?? '';
    const nodes = hosts
      .split(',')
      .map((node) => node.trim())
      .filter((node) => node !== '')
      .map((node) => (/:\d+$/.test(node) ? node : `${node}:6379`));
    return nodes.length === 0 ? 'the address in REDIS_URL' : nodes.join(',');
  }
  try {
    const parsed = new URL(url);
    if (parsed.hostname === '') return 'the address in REDIS_URL';
    return `${parsed.hostname}:${parsed.port === '' ? '6379' : parsed.port}`;
  } catch {
    return 'the address in REDIS_URL';
  }
}
