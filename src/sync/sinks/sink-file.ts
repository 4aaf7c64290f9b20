/**
 * Where a file sink writes: the job's `sink.path`, confined to ROWBRIDGE_DATA_DIR when
 * that is set (see resolveDataFile). Resolved on first use, since a sink opens nothing
 * before its first write, and once, so every write goes to the file that was checked.
 */
import { resolveDataFile } from '../sources/file-input.ts';
import { SinkError } from './sink-error.ts';
import type { SinkDeps } from './sink-spec.ts';

/** A function giving the checked absolute path of the sink's file (the same promise each call). */
export function locateSinkFile(path: string, deps: SinkDeps): () => Promise<string> {
  let located: Promise<string> | undefined;
  return () => {
    located ??= resolveDataFile(path, deps.baseDir, deps.env, 'sink.path').catch((err: unknown) => {
      throw new SinkError('SINK_CONFIG', (err as Error).message);
    });
    return located;
  };
}
