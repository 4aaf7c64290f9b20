/**
 * No source file over 300 lines (issue 24 §3): a file that grows past it holds more than
 * one thing, and is split by what it holds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const LIMIT = 300;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

function overLimit(files: string[]): string[] {
  return files
    .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > LIMIT)
    .map(({ file, lines }) => `${path.relative(root, file)}: ${lines} lines`);
}

describe('source file size', () => {
  it(`no file of src/ or config/ is over ${LIMIT} lines`, () => {
    const files = [...sourceFiles(path.join(root, 'src')), ...sourceFiles(path.join(root, 'config'))];
    expect(files.length).toBeGreaterThan(200);
    expect(overLimit(files)).toEqual([]);
  });

  it('names a file that is over (the check itself can fail)', () => {
    expect(overLimit([path.join(root, 'test/integration/api-resources.test.ts')])).toHaveLength(1);
  });
});
