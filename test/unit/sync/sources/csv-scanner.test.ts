/**
 * The scanner (csv-scanner.ts) and what is built on it (csv-records.ts for the reader,
 * csv-count.ts for the pre-pass) against csv-parse with the reader's options, over
 * generated and hand-made files fed in chunks of every size: the same records, start
 * lines and counts, or, where the scanner is not sure, the same result through csv-parse.
 */
import { CsvError } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { countCsvRecords } from '../../../../src/sync/sources/csv-count.ts';
import { readCsvRecords } from '../../../../src/sync/sources/csv-records.ts';
import { createCsvDecoder } from '../../../../src/sync/sources/csv-decoder.ts';
import { createCsvScanner, MAX_HELD_CHARS } from '../../../../src/sync/sources/csv-scanner.ts';
import type { CsvSourceSpec } from '../../../../src/sync/sources/source-spec.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';

type Spec = Omit<CsvSourceSpec, 'type' | 'path'>;
type Outcome = { records: { fields: string[]; line: number }[] } | { error: string };

/** What the reader read before the scanner: csv-parse over the whole file, lines counted as the reader did. */
function reference(bytes: Buffer, spec: Spec): Outcome {
  let rows: { record: string[]; info: { empty_lines: number } }[];
  try {
    rows = parseSync(bytes, {
      bom: true,
      delimiter: spec.delimiter ?? ',',
      quote: spec.quote ?? '"',
      encoding: (spec.encoding ?? 'utf8') as BufferEncoding,
      skip_empty_lines: spec.skipEmptyLines ?? true,
      relax_column_count: true,
      info: true,
    }) as unknown as typeof rows;
  } catch (err) {
    return { error: (err as CsvError).code };
  }
  let nextLine = 1;
  let emptySeen = 0;
  return {
    records: rows.map(({ record, info }) => {
      const line = nextLine + (info.empty_lines - emptySeen);
      emptySeen = info.empty_lines;
      nextLine = line + 1 + record.reduce((n, f) => n + (f.match(/\r\n|\r|\n/g)?.length ?? 0), 0);
      return { fields: record, line };
    }),
  };
}

function cut(bytes: Buffer, sizes: () => number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = Math.max(1, sizes());
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

async function* stream(chunks: Buffer[]): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield await Promise.resolve(chunk);
}

async function viaReader(chunks: Buffer[], spec: Spec): Promise<Outcome> {
  const records: { fields: string[]; line: number }[] = [];
  try {
    for await (const batch of readCsvRecords(
      stream(chunks),
      { type: 'csv', path: 'x.csv', ...spec },
      { onCsvError: (err) => err },
    ))
      records.push(...batch);
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    return { error: err.code };
  }
  return { records };
}

/** The pre-pass counts the reference gives: undefined where the reader refuses the header or the parse fails. */
function referenceCounts(outcome: Outcome, spec: Spec): { records: number; invalid: number } | undefined {
  if ('error' in outcome) return undefined;
  const [first, ...rest] = outcome.records;
  if (first === undefined) return { records: 0, invalid: 0 };
  const header = spec.header ?? true;
  if (header && (first.fields.includes('') || new Set(first.fields).size !== first.fields.length))
    return undefined;
  const rows = header ? rest : outcome.records;
  return {
    records: rows.length,
    invalid: rows.filter((r) => r.fields.length !== first.fields.length).length,
  };
}

/** Chunkings of a file: whole, every fixed size from 1 to 7 bytes, random sizes, 64 KiB. */
function chunkings(bytes: Buffer, random: () => number): Buffer[][] {
  const out = [[bytes], cut(bytes, () => 65_536), cut(bytes, () => 1 + Math.floor(random() * 40))];
  for (let size = 1; size <= 7; size++) out.push(cut(bytes, () => size));
  return out;
}

/** Checks a file every way; answers whether the scanner read all of it (no csv-parse). */
async function check(bytes: Buffer, spec: Spec, random: () => number): Promise<boolean> {
  const expected = reference(bytes, spec);
  const counts = referenceCounts(expected, spec);
  let scannedAll = true;
  for (const chunks of chunkings(bytes, random)) {
    const label = `${JSON.stringify(spec)} ${JSON.stringify(bytes.toString('latin1'))} in ${chunks.length} chunks`;
    expect(await viaReader(chunks, spec), label).toEqual(expected);
    const counted = await countCsvRecords(stream(chunks), { type: 'csv', path: 'x.csv', ...spec });
    if (counted === undefined) scannedAll = false;
    else expect(counted, label).toEqual(counts);
  }
  return scannedAll;
}

const DIALECTS = [
  { delimiter: ',', quote: '"' },
  { delimiter: ';', quote: "'" },
  { delimiter: '\t', quote: '"' },
  { delimiter: '|', quote: '"' },
] as const;

/** A file csv-parse reads without trouble: quoted delimiters, doubled quotes, line breaks in quotes, ragged rows, empty lines. */
function soundFile(random: () => number): { bytes: Buffer; spec: Spec } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const { delimiter, quote } = pick(DIALECTS);
  const latin1 = random() < 0.2;
  const nl = pick(['\n', '\r\n']);
  const words = latin1
    ? ['a', 'Zürich', 'x y', '1.5', 'José', '"']
    : ['a', 'Zürich', '日本', '🙂', 'x y', '1.5', '"'];
  // Outside quotes a `"` is data when the quote is `'`; inside them csv-parse takes it as an escape.
  const plain = () => (quote === '"' ? pick(words.filter((w) => w !== '"')) : pick(words));
  const inQuotes = () => pick(words.filter((w) => w !== '"'));
  const quoted = () => {
    const parts = [inQuotes(), delimiter, pick(['\n', '\r\n']), '', inQuotes()];
    if (quote === '"') parts.push('""');
    let inner = '';
    for (let i = Math.floor(random() * 4); i > 0; i--) inner += pick(parts);
    return quote + inner + quote;
  };
  const width = 1 + Math.floor(random() * 4);
  const lines: string[] = [];
  const rows = Math.floor(random() * 12);
  for (let r = 0; r <= rows; r++) {
    if (random() < 0.1) lines.push('');
    const n = random() < 0.15 ? Math.max(1, width + pick([-1, 1])) : width;
    const fields = Array.from({ length: n }, (_, i) =>
      r === 0 ? `c${i}` : random() < 0.3 ? quoted() : random() < 0.1 ? '' : plain(),
    );
    lines.push(fields.join(delimiter));
  }
  const text = (random() < 0.2 && !latin1 ? '\uFEFF' : '') + lines.join(nl) + (random() < 0.7 ? nl : '');
  const spec: Spec = {
    delimiter,
    quote,
    encoding: latin1 ? 'latin1' : 'utf8',
    skipEmptyLines: random() < 0.8,
    header: random() < 0.8,
  };
  return { bytes: Buffer.from(text, latin1 ? 'latin1' : 'utf8'), spec };
}

/** Anything: stray quotes and \r, text after quotes, unclosed quotes, bytes that are not UTF-8. */
function noiseFile(random: () => number): { bytes: Buffer; spec: Spec } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const { delimiter, quote } = pick(DIALECTS);
  const tokens = [
    'a',
    'é',
    '日',
    delimiter,
    delimiter,
    quote,
    quote,
    quote + quote,
    '"',
    '\n',
    '\n',
    '\r\n',
    '\r',
    ' ',
    '\uFEFF',
  ];
  const parts: Buffer[] = [];
  if (random() < 0.1) parts.push(Buffer.from([0xef, 0xbb, 0xbf]));
  if (random() < 0.03) parts.push(Buffer.from([0xff, 0xfe]));
  for (let i = Math.floor(random() * 40); i > 0; i--) {
    parts.push(
      random() < 0.03 ? Buffer.from([pick([0xff, 0xc3, 0xe2, 0x80, 0x00])]) : Buffer.from(pick(tokens)),
    );
  }
  const spec: Spec = {
    delimiter,
    quote,
    encoding: random() < 0.2 ? 'latin1' : 'utf8',
    skipEmptyLines: random() < 0.7,
    header: random() < 0.7,
  };
  return { bytes: Buffer.concat(parts), spec };
}

describe('csv scanner against csv-parse', () => {
  it('reads generated sound files exactly as csv-parse does, in any chunking, without handing them over', async () => {
    const random = seededRandom(12);
    for (let i = 0; i < 400; i++) {
      const { bytes, spec } = soundFile(random);
      const scannedAll = await check(bytes, spec, random);
      // A header with a repeated name is the one thing of a sound file the pre-pass leaves to the full path.
      const head = reference(bytes, spec);
      const refused = referenceCounts(head, spec) === undefined;
      expect(scannedAll || refused, JSON.stringify(bytes.toString('latin1'))).toBe(true);
    }
  });

  it('gives csv-parse’s records, lines and errors for random noise, handing over where it is not sure', async () => {
    const random = seededRandom(7);
    for (let i = 0; i < 1000; i++) {
      const { bytes, spec } = noiseFile(random);
      await check(bytes, spec, random);
    }
  });

  it('agrees with csv-parse on hand-made tricky files', async () => {
    const random = seededRandom(3);
    const cases: [string | Buffer, Spec][] = [
      ['"a""b",c\n"",""\n', {}],
      ['a,b\r\n"x\r\ny",z\r\n\r\n', {}],
      ['a,b\n"x\ry",z\n', {}],
      ['a,b\n"x\r\ny",z\n', {}],
      ['a,b\r\n1,2\n3,4\r\n', {}],
      ['a,b\n1,2\r\n3,4\n', {}],
      ['a,b\r1,2\r', {}],
      ['a,b\n1,"2"x\n', {}],
      ['a,b\n1,"2\n', {}],
      ['a,b\n1,x"y\n', {}],
      ['a,b\n1,2\r', {}],
      ['a,b\n1,2\n"3', {}],
      ['a,b\n1,"2"\0\n', {}],
      ['a,b\n\n\n', { skipEmptyLines: false }],
      ['a,b\n,\n\n,x\n', {}],
      ['\n\na,b\n\n1,2', {}],
      ['a', {}],
      ['', {}],
      ['\n', {}],
      ['\r\n', { skipEmptyLines: false }],
      ['""', { header: false }],
      ['ab', {}],
      ["a;b\n'x;y';2\n'it''s';3\n", { delimiter: ';', quote: "'" }],
      ["a;b\n'it\"s';3\n", { delimiter: ';', quote: "'" }],
      ['a;b\nsay "hi";3\n', { delimiter: ';', quote: "'" }],
      ['\uFEFFid,name\n1,x\n', {}],
      ['\uFEFF\uFEFFid,name\n1,x\n', {}],
      [Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x0a, 0xe9, 0x0a]), { encoding: 'latin1' }],
      [Buffer.from([0xff, 0xfe, 0x61, 0x00, 0x0a, 0x00]), {}],
      [Buffer.from([0x61, 0x2c, 0x62, 0x0a, 0xc3, 0x2c, 0xff, 0x0a, 0xe2, 0x82]), {}],
      [Buffer.from('name,city\nJosé,Zürich\n', 'latin1'), { encoding: 'latin1' }],
      ['a|b\n1|"x|y"\n', { delimiter: '|' }],
      ['a,b,a\n1,2,3\n', {}],
      ['a,,c\n1,2,3\n', {}],
      ['x,y,z\n1,2\n', { header: false }],
    ];
    for (const [text, spec] of cases) await check(Buffer.from(text), spec, random);
  });

  it('hands a record longer than it holds to csv-parse, which reads it the same', async () => {
    const big = 'x'.repeat(MAX_HELD_CHARS + 10);
    const bytes = Buffer.from(`a,b\n1,"${big}"\n2,y\n`);
    const chunks = [bytes.subarray(0, 10), ...cut(bytes.subarray(10), () => 65_536)];
    expect(await viaReader(chunks, {})).toEqual(reference(bytes, {}));
    expect(await countCsvRecords(stream(chunks), { type: 'csv', path: 'x.csv' })).toBeUndefined();
  });

  it('leaves to csv-parse the dialects it does not read: long or non-ASCII delimiters, a quote equal to the delimiter', () => {
    expect(createCsvScanner({ delimiter: '::', build: true })).toBeUndefined();
    expect(createCsvScanner({ delimiter: '§', build: true })).toBeUndefined();
    expect(createCsvScanner({ delimiter: ';', quote: ';', build: true })).toBeUndefined();
    expect(createCsvScanner({ delimiter: '\n', build: true })).toBeUndefined();
    expect(createCsvScanner({ build: true })).toBeDefined();
  });

  it('a fatal decoder answers undefined for bytes that are not UTF-8, even cut across chunks', () => {
    const decoder = createCsvDecoder('utf8', true);
    expect(decoder.decode(Buffer.from('ab,c\n\xe6'.slice(0, 5)))).toBe('ab,c\n');
    expect(decoder.decode(Buffer.from([0xe6, 0x97]))).toBe('');
    expect(decoder.end()).toBeUndefined();
  });
});
