import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/rowbridge.js');

/** A Node older than 22.18 on this machine (Debian's, when the project runs a newer one). */
function oldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    const [major = 0, minor = 0] = version.split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 18)) return candidate;
  }
  return undefined;
}

describe('the rowbridge command on an old Node', () => {
  const old = oldNode();

  it.skipIf(old === undefined)(
    'says which Node it needs and how to get it, exit 1, instead of ERR_UNKNOWN_FILE_EXTENSION',
    () => {
      const result = spawnSync(old!, [BIN, 'run', 'orders'], { cwd: ROOT, encoding: 'utf8' });
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(
        /^rowbridge needs Node\.js 22\.18 or newer \(Node 24 LTS recommended\); this is Node \d+\./,
      );
      expect(result.stderr).toContain('nvm install 24');
      expect(result.stderr).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
    },
  );

  it('on this Node it runs the CLI (package.json bin and npm start use the same file)', () => {
    const result = spawnSync(process.execPath, [BIN, '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^usage: rowbridge <command>/);
  });
});
