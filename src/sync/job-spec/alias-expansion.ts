/**
 * How far YAML aliases expand a document, measured on its tree before it is turned into
 * data. yaml's own `maxAliasCount` caps how many aliases resolve, not what they expand to:
 * a 2 MB spec of aliases of aliases under that count took 18 s and 1.16 GB to load.
 */
import { isAlias, isCollection, isPair } from 'yaml';
import type { Document } from 'yaml';

/** The alias that took the document past the cap: its name and where it stands. */
export interface AliasOverrun {
  alias: string;
  /** Offset of the alias in the text. */
  offset: number;
}

/**
 * Counts the values the document's data would hold, each alias counting as the whole
 * node it names, in one pass (an anchored node's size is computed once and reused).
 * Returns the first alias past which the values beyond those written exceed `cap`, or
 * undefined. An alias inside the node it names counts as over the cap.
 */
export function aliasExpansion(doc: Document.Parsed, cap: number): AliasOverrun | undefined {
  const anchors = new Map<string, unknown>();
  const sizes = new Map<unknown, number>();
  const over = cap + 1;
  let added = 0;

  // Iterative, with an explicit stack: a deeply nested spec must not overflow the call stack.
  type Frame = { node: unknown; children: unknown[]; next: number; total: number };
  const childrenOf = (node: unknown): unknown[] => {
    if (isPair(node)) return [node.key, node.value];
    if (isCollection(node)) return node.items as unknown[];
    return [];
  };
  const enter = (node: unknown): Frame => {
    const anchor = (node as { anchor?: string } | null)?.anchor;
    if (typeof anchor === 'string') anchors.set(anchor, node);
    // In progress: an alias to a node it stands inside reads as over the cap.
    sizes.set(node, over);
    return { node, children: childrenOf(node), next: 0, total: 1 };
  };
  const stack: Frame[] = [enter(doc.contents)];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.next < frame.children.length) {
      const child = frame.children[frame.next++];
      if (child === null || child === undefined) continue;
      if (isAlias(child)) {
        const target = anchors.get(child.source);
        const size = target === undefined ? 1 : (sizes.get(target) ?? 1);
        added += size;
        frame.total += size;
        if (added > cap) return { alias: child.source, offset: child.range?.[0] ?? 0 };
        continue;
      }
      stack.push(enter(child));
      continue;
    }
    stack.pop();
    sizes.set(frame.node, frame.total);
    const parent = stack[stack.length - 1];
    if (parent !== undefined) parent.total += frame.total;
  }
  return undefined;
}
