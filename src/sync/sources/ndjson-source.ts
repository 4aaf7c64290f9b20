/**
 * NDJSON source: one JSON object per line, read with readline so only one line is in
 * memory. Blank lines are skipped; a line that is not a JSON object is yielded as an
 * invalid record naming file and line, and the read goes on.
 */
import { createInterface } from 'node:readline';
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

/** Streams the records of an NDJSON file. */
export async function* readNdjsonSource(spec: NdjsonSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  const { file, stream } = await openSourceFile(spec.path, deps.baseDir, { encoding: 'utf8', signal: deps.signal });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const keep = createCursorFilter(deps.since, deps.cursorField);
  let line = 0;
  let index = 0;
  try {
    for await (const raw of lines) {
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
      yield { data: parsed.data, position: { index: index++, line }, ...('cursor' in decision ? { cursor: decision.cursor } : {}) };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
