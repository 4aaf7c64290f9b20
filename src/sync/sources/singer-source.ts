/**
 * The reader of a singer source: one chunk of a tap's records, staged by the `singer`
 * command (src/cli/singer.ts) as lines of `{"line": N, "record": {...}}`. Each record
 * keeps the line of stdin it came on, so a dead letter names where the tap wrote it.
 */
import { readFile } from 'node:fs/promises';
import type { SingerSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { SourceError } from './source-error.ts';
import type { SourceItem } from './source-error.ts';

/** One staged record: the stdin line it came on and the RECORD's `record`. */
export interface StagedRecord {
  line: number;
  record: Record<string, unknown>;
}

/** Streams the staged records of one chunk, in the order the tap wrote them. */
export async function* readSingerChunk(spec: SingerSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  if (deps.singerChunk === undefined) {
    throw new SourceError(
      'SOURCE_CONFIG',
      `the singer source (stream ${spec.stream}) reads a tap's output from stdin: run the job as \`tap | rowbridge singer JOB\`, not with run, enqueue or a schedule`,
    );
  }
  let text: string;
  try {
    text = await readFile(deps.singerChunk, 'utf8');
  } catch (err) {
    // Staged by the command that queued the run: gone means that process is gone too.
    throw new SourceError(
      'SOURCE_CONFIG',
      `the staged chunk of stream ${spec.stream} is gone (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}): restart the tap from the last STATE rowbridge singer printed`,
      { cause: err },
    );
  }
  let index = 0;
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    deps.signal?.throwIfAborted();
    const staged = JSON.parse(raw) as StagedRecord;
    yield { data: staged.record, position: { index: index++, line: staged.line } };
  }
}
