/**
 * Strings joined by {@link SEPARATOR}: a column of strings, none holding the separator,
 * is one string in a batch job instead of one per row (./columnar-rows.ts).
 */
export interface Joined {
  j: string;
}

/**
 * DEL: printable for JSON (no escape, one byte), and not in text people write. A column
 * with a value that holds it stays an array.
 */
const SEPARATOR = '\u007f';

/** `column` as one string when every value is a string without {@link SEPARATOR}. */
export function joined(column: unknown[]): unknown[] | Joined {
  for (const value of column) if (typeof value !== 'string' || value.includes(SEPARATOR)) return column;
  return { j: (column as string[]).join(SEPARATOR) };
}

export function isJoined(value: unknown): value is Joined {
  return typeof (value as Partial<Joined> | null)?.j === 'string';
}

/**
 * A {@link Joined} column, read value by value: where each value starts is found once
 * (in an Int32Array, outside the heap's objects), and a value is cut from the string at
 * each read. Thousands of short strings alive for the whole job were what V8 promoted
 * most of a job's data (195 of 1,090 MB in a 1M-row import).
 */
export class JoinedColumn {
  readonly #text: string;
  /** Start of value i, and one past the end of the last plus one at `[n]`. */
  readonly #starts: Int32Array;

  constructor(text: string, n: number) {
    const starts = new Int32Array(n + 1);
    let at = 0;
    for (let i = 0; i < n; i++) {
      if (at > text.length)
        throw new Error(`batch job data: a joined column holds fewer than its ${n} values`);
      starts[i] = at;
      const end = text.indexOf(SEPARATOR, at);
      at = end < 0 ? text.length + 1 : end + 1;
    }
    if (at !== text.length + 1)
      throw new Error(`batch job data: a joined column holds more than its ${n} values`);
    starts[n] = at;
    this.#text = text;
    this.#starts = starts;
  }

  at(i: number): string {
    return this.#text.slice(this.#starts[i], this.#starts[i + 1]! - 1);
  }
}
