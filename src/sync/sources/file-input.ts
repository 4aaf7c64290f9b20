/** Opening a source file with an error that says which file and why, before streaming it. */
import { createReadStream, type ReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { SourceError } from './source-error.ts';

/** The absolute path of a job's file: relative paths resolve against the job's folder. */
export function resolveJobPath(path: string, baseDir: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/**
 * Checks the file before streaming: a read stream reports ENOENT only on first read, as
 * a bare system error without the job's context.
 */
export async function openSourceFile(
  path: string,
  baseDir: string,
  options: { encoding?: BufferEncoding; signal?: AbortSignal | undefined } = {},
): Promise<{ file: string; stream: ReadStream }> {
  const file = resolveJobPath(path, baseDir);
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new SourceError('SOURCE_CONFIG', `${file} is not a file (source path "${path}")`);
  } catch (err) {
    if (err instanceof SourceError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable' : `cannot be read (${code ?? 'unknown error'})`;
    throw new SourceError('SOURCE_CONFIG', `${file} ${why} (source path "${path}", relative to ${baseDir})`, { cause: err });
  }
  const stream = createReadStream(file, {
    ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { file, stream };
}
