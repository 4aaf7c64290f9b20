/**
 * NDJSON source: one JSON object per line, only one line in memory. Blank lines are
 * skipped; a line that is not a JSON object is yielded as an invalid record naming file
 * and line, and the read goes on.
 */
import type { NdjsonSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { createCursorFilter } from './cursor-filter.ts';
import { describeJsonType } from './dot-path.ts';
import { openSourceFile } from './file-input.ts';
import { invalidRecord, type SourceItem } from './source-error.ts';

/** Parses one line: the object, or why it is not one. */
export function parseJsonObject(text: string): { data: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `not valid JSON (${(err as Error).message})` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { problem: `expected a JSON object, found ${describeJsonType(value)}` };
  }
  return { data: value as Record<string, unknown> };
}

/**
 * Splits a text stream on LF (a CR before it is dropped). Not node:readline: it also
 * breaks lines at U+2028/U+2029, which JSON strings may hold unescaped.
 */
export async function* splitLines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  const dropCr = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);
  // Pieces of an unfinished line are joined once, at its end: a long line costs no re-copying.
  let pending: string[] = [];
  for await (const chunk of chunks) {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      pending.push(chunk.slice(start, end));
      yield dropCr(pending.join(''));
      pending = [];
      start = end + 1;
    }
    if (start < chunk.length) pending.push(chunk.slice(start));
  }
  if (pending.length > 0) yield dropCr(pending.join(''));
}

/** Streams the records of an NDJSON file. */
export async function* readNdjsonSource(
  spec: NdjsonSourceSpec,
  deps: SourceDeps,
): AsyncGenerator<SourceItem> {
  // Before the file is opened: a range read without a cursor field fails without leaking it.
  const keep = createCursorFilter(deps.since, deps.cursorField, deps, `ndjson source ${spec.path}`);
  const { file, stream } = await openSourceFile(spec.path, deps.baseDir, {
    encoding: 'utf8',
    signal: deps.signal,
  });
  let line = 0;
  let index = 0;
  try {
    for await (const raw of splitLines(stream as AsyncIterable<string>)) {
      line++;
      deps.signal?.throwIfAborted();
      const text = line === 1 && raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
      if (text.trim() === '') continue;
      const parsed = parseJsonObject(text);
      if ('problem' in parsed) {
        yield invalidRecord({ index: index++, line }, `${file} line ${line}: ${parsed.problem}`);
        continue;
      }
      const decision = keep(parsed.data);
      if (!decision.keep) continue;
      yield {
        data: parsed.data,
        position: { index: index++, line },
        ...('cursor' in decision ? { cursor: decision.cursor } : {}),
      };
    }
  } finally {
    stream.destroy();
  }
}
