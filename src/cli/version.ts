import { readFileSync } from 'node:fs';

/** rowbridge's version: the one in package.json, read when asked (`rowbridge --version`). */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
