/**
 * Finds where a path of the parsed data sits in the YAML text, so messages can point
 * at `file:line:col`. When the path does not exist (a missing key), the nearest
 * existing parent is the best place to send the user.
 */
import type { Document, LineCounter, Node } from 'yaml';
import { isMap, isScalar, isSeq } from 'yaml';

/** 1-based line and column in the YAML text. */
export interface YamlPosition {
  line: number;
  column: number;
}

function start(node: Node | null | undefined, lineCounter: LineCounter): YamlPosition | undefined {
  const offset = node?.range?.[0];
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/**
 * Position of `path` in `doc`. For the last segment of an unknown-key issue the key
 * itself is the spot (`pointAtKey`), otherwise the value.
 */
export function locateInYaml(
  doc: Document,
  lineCounter: LineCounter,
  path: readonly PropertyKey[],
  pointAtKey = false,
): YamlPosition | undefined {
  let node: unknown = doc.contents;
  let position = start(doc.contents, lineCounter);
  // Where a missing child is reported: the key of its parent (`target:`), which is where
  // the user will add it, rather than the parent's first entry on the next line.
  let parentKey = position;
  for (const [index, segment] of path.entries()) {
    const last = index === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (pair === undefined) return parentKey;
      const keyPosition = start(isScalar(pair.key) ? pair.key : undefined, lineCounter);
      const valueNode = pair.value as Node | null;
      // A block mapping or list starts on the line after its key; the key is the better spot.
      const isBlock = (isMap(valueNode) || isSeq(valueNode)) && valueNode.flow !== true;
      const valuePosition = isBlock ? undefined : start(valueNode, lineCounter);
      position = (last && pointAtKey ? keyPosition : (valuePosition ?? keyPosition)) ?? position;
      parentKey = keyPosition ?? position;
      node = valueNode;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Node | undefined;
      if (item === undefined) return parentKey;
      position = start(item, lineCounter) ?? position;
      parentKey = position;
      node = item;
    } else {
      return position;
    }
  }
  return position;
}
