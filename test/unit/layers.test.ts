/**
 * The layers of docs/architecture.md, checked on the import graph of `src/` and `config/`,
 * type-only imports included (ESLint's no-cycle skips those): ground <- api <- config
 * <- sync <- queue <- cli/ops, the emulator apart, and no cycle anywhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

// The order lint enforces inside src/sync (a JavaScript file, so imported untyped).
const eslintConfig = '../../eslint.config.js';
const { SYNC_STAGES } = (await import(eslintConfig)) as { SYNC_STAGES: readonly string[] };

/** The layers each layer may import from (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  ground: [],
  api: ['ground'],
  config: ['ground'],
  sync: ['ground', 'api', 'config'],
  queue: ['ground', 'api', 'config', 'sync'],
  ops: ['ground', 'api', 'config', 'sync', 'queue'],
  cli: ['ground', 'api', 'config', 'sync', 'queue', 'ops', 'emulator'],
  emulator: [],
  entry: ['cli', 'ground', 'config'],
};

function layerOf(file: string): string {
  const rel = path.relative(root, file).split(path.sep);
  if (rel[0] === 'config') return 'config';
  if (rel.length === 2) return 'entry';
  return rel[1] ?? 'entry';
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of [...sourceFiles(path.join(root, 'src')), ...sourceFiles(path.join(root, 'config'))]) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)].map((m) =>
      path.resolve(path.dirname(file), m[1]!),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components with more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(path.relative(root, w));
      } while (w !== v);
      if (component.length > 1) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('layers', () => {
  const graph = importGraph();

  it('reads a graph of the whole product', () => {
    expect(graph.size).toBeGreaterThan(200);
    const edges = [...graph.values()].reduce((n, t) => n + t.length, 0);
    expect(edges).toBeGreaterThan(500);
  });

  it('every import goes down the layers, never up or sideways', () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      const from = layerOf(file);
      for (const target of targets) {
        const to = layerOf(target);
        if (to !== from && !ALLOWED[from]!.includes(to))
          wrong.push(`${path.relative(root, file)} (${from}) imports ${path.relative(root, target)} (${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('inside src/sync, a stage folder imports only the stages before it; nothing loose at its root', () => {
    const syncRoot = path.join(root, 'src/sync');
    const stageOf = (file: string): string => path.relative(syncRoot, file).split(path.sep)[0]!;
    const loose = [...graph.keys()]
      .filter((f) => path.dirname(f) === syncRoot)
      .map((f) => path.relative(root, f));
    expect(loose).toEqual([]);
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      if (layerOf(file) !== 'sync') continue;
      const from = SYNC_STAGES.indexOf(stageOf(file));
      for (const target of targets) {
        if (layerOf(target) !== 'sync' || stageOf(target) === stageOf(file)) continue;
        const to = SYNC_STAGES.indexOf(stageOf(target));
        if (from < 0 || to < 0 || to > from)
          wrong.push(`${path.relative(root, file)} imports ${path.relative(root, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no import cycles, type-only imports included', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself can fail)', () => {
    const a = path.join(root, 'src/ground/a.ts');
    const b = path.join(root, 'src/ground/b.ts');
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toHaveLength(1);
  });
});
