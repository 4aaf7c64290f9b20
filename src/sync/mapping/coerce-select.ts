/**
 * SingleSelect, Dropdown and MultipleSelect: written as an array of option keys, even
 * for a single select (platform notes §4). Source values match option texts
 * case-insensitively or option keys exactly. With `createOptions`, texts missing from
 * the structure are sent as texts with field-value type "2" so the platform creates
 * them [L]; every value is then sent as text (known ones as their option's text)
 * because that request reads all values as texts.
 */
import { CoerceFailure, type Coercer, kindOf, TypedValue } from './coerce-result.ts';
import { findOption, type OptionIndex } from './option-index.ts';

const SEPARATORS = /[,;]/;

export interface SelectCoercerOptions {
  multiple: boolean;
  createOptions: boolean;
  options: OptionIndex;
}

function itemText(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw.trim();
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw);
  return undefined;
}

export function createSelectCoercer({ multiple, createOptions, options }: SelectCoercerOptions): Coercer {
  const unknownReason = (items: readonly string[]): CoerceFailure =>
    new CoerceFailure(`no option ${items.map((i) => `"${i}"`).join(', ')}; ${options.allowedHint}`);

  function items(raw: unknown): string[] | CoerceFailure {
    if (Array.isArray(raw)) {
      const out: string[] = [];
      for (const item of raw as unknown[]) {
        const text = itemText(item);
        if (text === undefined)
          return new CoerceFailure(`expected option texts or keys, got ${kindOf(item)} in the list`);
        if (text !== '') out.push(text);
      }
      return out;
    }
    const text = itemText(raw);
    if (text === undefined) return new CoerceFailure(`expected an option text or key, got ${kindOf(raw)}`);
    // An option whose own text contains a separator still matches as a whole.
    if (!SEPARATORS.test(text) || findOption(options, text) !== undefined) return [text];
    return text
      .split(SEPARATORS)
      .map((part) => part.trim())
      .filter((part) => part !== '');
  }

  if (!multiple) {
    return (raw) => {
      const list = items(raw);
      if (list instanceof CoerceFailure) return list;
      if (list.length > 1) {
        return new CoerceFailure(
          `several values (${list.map((i) => `"${i}"`).join(', ')}) for a single-select field; give one`,
        );
      }
      const item = list[0] ?? '';
      const option = findOption(options, item);
      if (option !== undefined) return [option.key];
      return createOptions ? new TypedValue([item], '2') : unknownReason([item]);
    };
  }

  return (raw) => {
    const list = items(raw);
    if (list instanceof CoerceFailure) return list;
    const keys: string[] = [];
    const texts: string[] = [];
    const missing: string[] = [];
    const seen = new Set<string>();
    for (const item of list) {
      const option = findOption(options, item);
      const id = option === undefined ? `\u0000${item.toLowerCase()}` : option.key;
      if (seen.has(id)) continue;
      seen.add(id);
      if (option === undefined) {
        missing.push(item);
        texts.push(item);
      } else {
        keys.push(option.key);
        texts.push(option.value);
      }
    }
    if (missing.length === 0) return keys;
    return createOptions ? new TypedValue(texts, '2') : unknownReason(missing);
  };
}
