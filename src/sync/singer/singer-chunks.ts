/**
 * A tap's output cut into chunks that can be written one after another. A chunk ends
 * when it holds `chunkRows` records, or at a STATE once it has waited `chunkMs`, or at
 * the end of the output; it carries the STATEs that came before its end and after the
 * previous chunk's. The consumer writes a chunk's records and only then prints its
 * STATEs, so a tap restarted from the last STATE printed re-sends every record that was
 * not safe yet (the faros stream-base rule: state is saved after the writes it covers).
 */
import { ConfigError } from '../../ground/errors.ts';
import type { StagedRecord } from '../sources/singer-source.ts';
import { parseSingerMessage } from './singer-message.ts';
import type { SingerSchema } from './singer-message.ts';

/** Records of the job's stream to write, then the STATEs to print once they are written. */
export interface SingerChunk {
  records: StagedRecord[];
  states: unknown[];
  /** The stdin line the chunk ends on. */
  lastLine: number;
}

/** How a tap's output is cut. */
export interface SingerChunkOptions {
  /** The job's stream; RECORDs of other streams are skipped. */
  stream: string;
  /** A chunk this full is written at once, STATE or not. @defaultValue 5000 */
  chunkRows?: number;
  /** A STATE ends a chunk that has been filling this long. @defaultValue 10000 */
  chunkMs?: number;
  /** Checks each SCHEMA of the stream against the mapping; throws to stop. */
  checkSchema(schema: SingerSchema, where: string): void;
  /** @defaultValue `Date.now` */
  now?: () => number;
}

/** Cuts `lines` (a tap's output, line by line) into {@link SingerChunk}s. */
export async function* singerChunks(
  lines: AsyncIterable<string>,
  options: SingerChunkOptions,
): AsyncGenerator<SingerChunk> {
  const chunkRows = options.chunkRows ?? 5000;
  const chunkMs = options.chunkMs ?? 10_000;
  const now = options.now ?? Date.now;
  let records: StagedRecord[] = [];
  let states: unknown[] = [];
  let startedAt = now();
  let schemaSeen = false;
  let line = 0;
  const take = (): SingerChunk => {
    const chunk = { records, states, lastLine: line };
    records = [];
    states = [];
    startedAt = now();
    return chunk;
  };
  for await (const raw of lines) {
    line++;
    const text = line === 1 && raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
    if (text.trim() === '') continue;
    const where = `stdin line ${line}`;
    const message = parseSingerMessage(text, where);
    if (message.type === 'SCHEMA' && message.stream === options.stream) {
      options.checkSchema(message, where);
      schemaSeen = true;
    } else if (message.type === 'RECORD' && message.stream === options.stream) {
      if (!schemaSeen)
        throw new ConfigError(
          `${where}: RECORD of stream ${options.stream} before any SCHEMA of it: a tap sends the SCHEMA of a stream before its records`,
        );
      records.push({ line, record: message.record });
      if (records.length >= chunkRows) yield take();
    } else if (message.type === 'STATE') {
      states.push(message.value);
      // Nothing of the stream waits: the STATE covers only what is already safe.
      if (records.length === 0 || now() - startedAt >= chunkMs) yield take();
    }
  }
  if (records.length > 0 || states.length > 0) yield take();
}
