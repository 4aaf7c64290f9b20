import type { Source, SourceRecord } from '../model/types.ts';
import { chunksOf, hasRecordChunks, recordChunks } from '../sources/record-chunks.ts';

/** A record with its ordinal shifted by `offset`. */
function shifted(record: SourceRecord, offset: number): SourceRecord {
  return { ...record, position: { ...record.position, index: record.position.index + offset } };
}

/**
 * Shifts a chunk's record ordinals so that rows of different chunks never share one. A
 * source that reads a chunk at a time (sync/sources/record-chunks.ts) still does, shifted.
 */
export function offsetIndexes(source: Source, offset: number): Source {
  if (offset === 0) return source;
  async function* records(): AsyncGenerator<SourceRecord> {
    for await (const record of source) yield shifted(record, offset);
  }
  if (!hasRecordChunks(source)) return records();
  async function* shiftedChunks(): AsyncGenerator<SourceRecord[]> {
    for await (const chunk of chunksOf(source)!) yield chunk.map((record) => shifted(record, offset));
  }
  return Object.assign(records(), { [recordChunks]: shiftedChunks });
}
