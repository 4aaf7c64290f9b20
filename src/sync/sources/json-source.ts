/**
 * JSON source: streams the elements of one array in a JSON document (the root, or the
 * array at `itemsPath`) with the scanner of json-array-scanner.ts, so a file of any size
 * is read with one element in memory. An element that is not a valid JSON object is an
 * invalid record; a broken document structure stops the read with file and line.
 */
import type { JsonSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { createCursorFilter } from './cursor-filter.ts';
import { splitDotPath } from './dot-path.ts';
import { openSourceFile } from './file-input.ts';
import { createJsonArrayScanner } from './json-array-scanner.ts';
import { JsonScanError } from './json-scan-error.ts';
import { parseJsonObject } from './ndjson-source.ts';
import { invalidRecord, SourceError, type SourceItem } from './source-error.ts';

/** Streams the elements of the array of a JSON file. */
export async function* readJsonSource(spec: JsonSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  // Before the file is opened: a range read without a cursor field fails without leaking it.
  const keep = createCursorFilter(deps.since, deps.cursorField, deps, `json source ${spec.path}`);
  const { file, stream } = await openSourceFile(spec.path, deps.baseDir, {
    encoding: 'utf8',
    signal: deps.signal,
  });
  const scanner = createJsonArrayScanner(splitDotPath(spec.itemsPath));
  let first = true;
  let index = 0;
  let ordinal = 0;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const text = first && chunk.startsWith('\uFEFF') ? chunk.slice(1) : chunk;
      first = false;
      for (const element of scanner.push(text)) {
        deps.signal?.throwIfAborted();
        ordinal++;
        const parsed = parseJsonObject(element.text);
        if ('problem' in parsed) {
          const where = `${file} line ${element.line}: array element ${ordinal}`;
          yield invalidRecord({ index: index++, line: element.line }, `${where}: ${parsed.problem}`);
          continue;
        }
        const decision = keep(parsed.data);
        if (!decision.keep) continue;
        const position = { index: index++, line: element.line };
        yield { data: parsed.data, position, ...('cursor' in decision ? { cursor: decision.cursor } : {}) };
      }
      if (scanner.done) return;
    }
    scanner.end();
  } catch (err) {
    if (err instanceof JsonScanError) {
      throw new SourceError('SOURCE_FORMAT', `${file} line ${err.line}: malformed JSON: ${err.message}`, {
        cause: err,
      });
    }
    throw err;
  } finally {
    stream.destroy();
  }
}
