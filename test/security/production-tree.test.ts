/**
 * The image's production tree holds no build tooling (issue 22). typescript reached it
 * because @bull-board/api depends on valibot, which names typescript as an optional
 * peer: npm flags a package that is both a devDependency and an optional peer of a
 * production one `devOptional`, and `npm ci --omit=dev` alone keeps it (npm/cli#7772).
 * The Dockerfile's install must omit optional packages too; what that also drops must
 * be packages the image does without. Checked against the lockfile with npm's own rule
 * (arborist's reify filter), so no install is needed.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
}

/** Optional packages the image may go without, and why. */
const NOT_NEEDED = [
  /^pg-cloudflare$/, // pg's socket for Cloudflare Workers
  /^(@msgpackr-extract\/.*|msgpackr-extract)$/, // msgpackr decodes in JavaScript without it
  /^node-gyp-build-optional-packages$/, // msgpackr-extract's loader
];

async function dockerOmits(): Promise<Set<string>> {
  const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
  const install = /^RUN\s+(npm ci\b.*)$/m.exec(dockerfile)?.[1] ?? '';
  return new Set([...install.matchAll(/--omit[= ](\w+)/g)].map((m) => m[1] ?? ''));
}

/** Whether `npm ci` with these --omit values installs a package with these lockfile flags. */
function installs(entry: LockEntry, omit: Set<string>): boolean {
  if (entry.peer === true && omit.has('peer')) return false;
  if (entry.dev === true && omit.has('dev')) return false;
  if (entry.optional === true && omit.has('optional')) return false;
  return !(entry.devOptional === true && omit.has('dev') && omit.has('optional'));
}

describe("the image's production dependencies", () => {
  it('leave out typescript and every other package only development uses', async () => {
    const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, LockEntry>;
    };
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const omit = await dockerOmits();
    const entries = Object.entries(lock.packages).filter(([where]) => where !== '');
    const installed = entries.filter(([, entry]) => installs(entry, omit)).map(([where]) => where);
    const name = (where: string) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);

    expect(lock.packages['node_modules/typescript']).toBeDefined();
    expect(installed).not.toContain('node_modules/typescript');
    // mysql2 names @types/node a (required) peer: npm installs those 2 MB of types with it.
    for (const dev of Object.keys(pkg.devDependencies).filter((d) => d !== '@types/node'))
      expect(installed).not.toContain(`node_modules/${dev}`);
    for (const dep of Object.keys(pkg.dependencies)) expect(installed).toContain(`node_modules/${dep}`);

    const dropped = entries
      .filter(([, entry]) => entry.dev !== true && entry.devOptional !== true && !installs(entry, omit))
      .map(([where]) => name(where));
    expect(dropped.filter((n) => !NOT_NEEDED.some((re) => re.test(n)))).toEqual([]);
  });
});
