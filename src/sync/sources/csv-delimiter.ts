/**
 * The field delimiter of a CSV file whose job does not state one, told from its first
 * line: Excel writes `;` where the decimal mark is a comma (German, French, Dutch Excel)
 * and a tab in "Unicode text" files. Only a first line with no `,` at all and some `;` or
 * tab is read as such, so a comma file is never read any other way; a single-column file
 * keeps `,` too.
 */

/** Delimiters told apart, in the order a tie is settled. */
const CANDIDATES = [';', '\t', '|'] as const;

/** How often each delimiter candidate and `,` occur in `line` outside `quote`d parts. */
export function delimiterCounts(line: string, quote = '"'): Map<string, number> {
  const counts = new Map<string, number>([[',', 0], ...CANDIDATES.map((c) => [c, 0] as [string, number])]);
  let quoted = false;
  for (const char of line) {
    if (char === quote) quoted = !quoted;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  return counts;
}

/** The first line of `text` (a file's decoded start), without its line break. */
export function firstLine(text: string): string {
  const end = text.search(/\r|\n/);
  return end === -1 ? text : text.slice(0, end);
}

/** The delimiter of the file whose decoded start is `text`: `,` unless its first line says otherwise. */
export function detectCsvDelimiter(text: string, quote = '"'): string {
  const counts = delimiterCounts(firstLine(text.startsWith('\ufeff') ? text.slice(1) : text), quote);
  if (counts.get(',')! > 0) return ',';
  let best: string = ',';
  for (const candidate of CANDIDATES) if (counts.get(candidate)! > (counts.get(best) ?? 0)) best = candidate;
  return best;
}

/** How a job names a delimiter in YAML. */
function written(delimiter: string): string {
  return delimiter === '\t' ? '"\\t"' : `'${delimiter}'`;
}

/**
 * A hint for a header (or, named by `what`, another line) read as one column with
 * `delimiter` that holds another one: "the header has 8 `;` and no `,`: set
 * source.delimiter: ';'"; undefined when none fits.
 */
export function delimiterHint(
  header: string,
  delimiter: string,
  quote = '"',
  what = 'the header',
): string | undefined {
  const counts = delimiterCounts(header, quote);
  if (counts.get(delimiter) !== 0 && counts.has(delimiter)) return undefined;
  let best: string | undefined;
  for (const candidate of [',', ...CANDIDATES]) {
    if (candidate === delimiter) continue;
    if (counts.get(candidate)! > (best === undefined ? 0 : counts.get(best)!)) best = candidate;
  }
  if (best === undefined) return undefined;
  const shown = (d: string): string => (d === '\t' ? 'tab' : `\`${d}\``);
  return `${what} has ${counts.get(best)} ${shown(best)} and no ${shown(delimiter)}: set source.delimiter: ${written(best)}`;
}
