/**
 * NDJSON sink: one JSON object per line (UTF-8, LF). How a run meets the existing file
 * (replace, merge by key, append) is file-sink.ts's part.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { resolveJobPath } from '../sources/file-input.ts';
import { createFileSink } from './file-sink.ts';
import { locateSinkFile } from './sink-file.ts';
import type { NdjsonSinkSpec, Sink, SinkDeps } from './sink-spec.ts';
import { sinkKey, sinkWriteMode } from './sink-mode.ts';

// bigint (pg/mysql big numbers when a caller converts them) has no JSON form: keep digits.
const replacer = (_key: string, value: unknown): unknown =>
  typeof value === 'bigint' ? value.toString() : value;

/** U+2028/U+2029 are valid raw in JSON, but line-oriented readers split on them: escape. */
const toLine = (record: Record<string, unknown>): string =>
  `${JSON.stringify(record, replacer).replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029')}\n`;

/** A line's object, or {} for a line that is not one (kept as it is, with no key). */
function parseLine(line: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Creates an NDJSON sink for `spec.path`. */
export function createNdjsonSink(spec: NdjsonSinkSpec, deps: SinkDeps): Sink {
  return createFileSink(
    {
      start: () => Promise.resolve(false),
      preamble: () => '',
      format: (records) => records.map(toLine).join(''),
      cell: (value) => (typeof value === 'string' ? value : JSON.stringify(value, replacer)),
      async *rows(path) {
        // Lines were written with U+2028/U+2029 escaped, so readline's extra breaks never occur.
        const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
        for await (const line of lines) {
          if (line.trim() === '') continue;
          yield { record: parseLine(line), text: `${line}\n` };
        }
      },
    },
    {
      shown: resolveJobPath(spec.path, deps.baseDir),
      locate: locateSinkFile(spec.path, deps),
      write: sinkWriteMode(spec.key, deps),
      key: sinkKey(spec.key, deps),
    },
  );
}
