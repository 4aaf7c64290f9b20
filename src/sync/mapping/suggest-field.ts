/**
 * "Did you mean" for a mapping target that names no field. Targets must be field ids or
 * aliases, but users type display names and typos; both are offered back as the
 * alias (or id) to write, with the display name for recognition.
 */
import type { WorksheetField } from '../../api/types.ts';

export function suggestField(target: string, fields: readonly WorksheetField[]): string | undefined {
  const wanted = target.trim().toLowerCase();
  let best: WorksheetField | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const field of fields) {
    for (const candidate of [field.alias, field.name, field.id]) {
      if (candidate === undefined || candidate === '') continue;
      const distance = editDistance(wanted, candidate.toLowerCase());
      if (distance < bestDistance) {
        best = field;
        bestDistance = distance;
      }
    }
  }
  // A third of the word, at least two edits: a typo or a case/space slip, not a different field.
  const allowed = Math.max(2, Math.floor(target.length / 3));
  if (best === undefined || bestDistance > allowed) return undefined;
  const ref = best.alias !== undefined && best.alias !== '' ? best.alias : best.id;
  return `did you mean "${ref}" (${best.name})?`;
}

/** Levenshtein distance with two rolling rows. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(
        Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
