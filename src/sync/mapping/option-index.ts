import type { FieldOption } from '../../api/types.ts';

/**
 * Options of one select field, indexed once per plan: by key and by trimmed,
 * lower-cased text. Deleted options are left out: the platform rejects their keys on
 * write (platform notes §4).
 */
export interface OptionIndex {
  byKey: ReadonlyMap<string, FieldOption>;
  byText: ReadonlyMap<string, FieldOption>;
  /** The first ten option texts, quoted, for error reasons. */
  allowedHint: string;
}

export function createOptionIndex(options: readonly FieldOption[] | undefined): OptionIndex {
  const byKey = new Map<string, FieldOption>();
  const byText = new Map<string, FieldOption>();
  for (const option of options ?? []) {
    if (option.isDeleted === true) continue;
    byKey.set(option.key, option);
    const text = option.value.trim().toLowerCase();
    // Two options differing only in case: the first (lowest index) wins, as a user reading
    // the list top-down would expect.
    if (!byText.has(text)) byText.set(text, option);
  }
  const texts = [...byKey.values()].map((o) => `"${o.value}"`);
  const allowedHint =
    texts.length === 0
      ? 'the field has no options'
      : `allowed: ${texts.slice(0, 10).join(', ')}${texts.length > 10 ? ` (and ${texts.length - 10} more)` : ''}`;
  return { byKey, byText, allowedHint };
}

/** An option by exact key or by case-insensitive text. */
export function findOption(index: OptionIndex, item: string): FieldOption | undefined {
  return index.byKey.get(item) ?? index.byText.get(item.toLowerCase());
}
