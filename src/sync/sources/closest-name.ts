/**
 * The name a typo most likely meant: the nearest of `names` by edit distance, ignoring
 * case, when it is close enough to be a typo (at most 2 edits, or a third of the name).
 */
export function closestName(name: string, names: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const candidate of names) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d <= Math.max(2, Math.floor(name.length / 3)) && (best === undefined || d < best.d))
      best = { name: candidate, d };
  }
  return best?.name;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}
