/**
 * Opening a source file with an error that says which file and why, before streaming it;
 * and the data-dir confinement of file sources and sinks (`ROWBRIDGE_DATA_DIR`).
 */
import { createReadStream, type ReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { readSetting } from '../../../config/settings.ts';
import { SourceError } from './source-error.ts';

/** The absolute path of a job's file: relative paths resolve against the job's folder. */
export function resolveJobPath(path: string, baseDir: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

function inside(dir: string, file: string): boolean {
  const rel = relative(dir, file);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** The real path of `file`, or of its nearest existing folder joined with the rest (a sink's file may not exist yet). */
async function realPathOf(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch (err) {
    const parent = dirname(file);
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === file) throw err;
    return resolve(await realPathOf(parent), relative(parent, file));
  }
}

/**
 * The file a job's `path` names, confined to `ROWBRIDGE_DATA_DIR` when it is set:
 * relative paths resolve under it (not the job's folder), and a path or symlink that
 * leads out of it is refused, so a job spec cannot read /etc/passwd into dead letters or
 * write over a file of the host. Without the setting paths resolve against `baseDir`.
 * Returns the real path, which the caller opens (a symlink swapped in afterwards is not
 * followed again). `field` names the spec field in errors (`source.path`, `sink.path`).
 */
export async function resolveDataFile(
  path: string,
  baseDir: string,
  env: NodeJS.ProcessEnv,
  field: string,
): Promise<string> {
  const dataDir = readSetting('dataDir', env);
  if (dataDir === undefined) return resolveJobPath(path, baseDir);
  const root = await realpath(resolve(dataDir)).catch((err: unknown) => {
    throw new SourceError(
      'SOURCE_CONFIG',
      `ROWBRIDGE_DATA_DIR ${dataDir} cannot be opened (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  });
  const file = resolve(root, path);
  const refuse = (why: string) =>
    new SourceError(
      'SOURCE_CONFIG',
      `${field} "${path}" ${why}: files must be inside ROWBRIDGE_DATA_DIR (${root})`,
    );
  if (!inside(root, file)) throw refuse('leads out of the data folder');
  const real = await realPathOf(file);
  if (!inside(root, real)) throw refuse('is a symlink (or under one) that points out of the data folder');
  return real;
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
    if (!info.isFile())
      throw new SourceError('SOURCE_CONFIG', `${file} is not a file (source path "${path}")`);
  } catch (err) {
    if (err instanceof SourceError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'is not readable'
          : `cannot be read (${code ?? 'unknown error'})`;
    throw new SourceError('SOURCE_CONFIG', `${file} ${why} (source path "${path}", relative to ${baseDir})`, {
      cause: err,
    });
  }
  const stream = createReadStream(file, {
    ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { file, stream };
}
