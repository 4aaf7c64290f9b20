/**
 * `${file:/run/secrets/name}` references: a secret a Docker or Kubernetes secret mount
 * holds, read when a run (or a notification) needs it and never stored. Confined to
 * ROWBRIDGE_DATA_DIR when that is set, like file sources: a job spec cannot then read
 * /etc/shadow into a header it sends to a host of its choosing.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { readSetting } from '../../../config/settings.ts';
import { SourceError } from './source-error.ts';

/** Largest secret file read: a secret is a token or a URL, not a data file. */
const MAX_SECRET_BYTES = 64 * 1024;

function inside(dir: string, file: string): boolean {
  const rel = relative(dir, file);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function realOrCode(file: string): string | { code: string } {
  try {
    return realpathSync(file);
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code ?? 'error' };
  }
}

/**
 * The file a `${file:PATH}` names, confined to ROWBRIDGE_DATA_DIR when it is set.
 * `setting` names the spec field in errors; the file's content is never in one.
 */
export function secretFilePath(path: string, env: NodeJS.ProcessEnv, setting: string): string {
  const dataDir = readSetting('dataDir', env);
  const ref = `\${file:${path}}`;
  if (dataDir === undefined) {
    if (!isAbsolute(path))
      throw new SourceError('SOURCE_CONFIG', `${setting} refers to ${ref}: the path must be absolute`);
    return path;
  }
  const root = realOrCode(resolve(dataDir));
  if (typeof root !== 'string')
    throw new SourceError('SOURCE_CONFIG', `ROWBRIDGE_DATA_DIR ${dataDir} cannot be opened (${root.code})`);
  const refuse = (why: string) =>
    new SourceError(
      'SOURCE_CONFIG',
      `${setting} refers to ${ref}, which ${why}: secret files must be inside ROWBRIDGE_DATA_DIR (${root})`,
    );
  const file = resolve(root, path);
  if (!inside(root, file)) throw refuse('leads out of the data folder');
  const real = realOrCode(file);
  if (typeof real !== 'string') return file;
  if (!inside(root, real)) throw refuse('is a symlink (or under one) that points out of the data folder');
  return real;
}

/**
 * The secret a `${file:PATH}` holds, without the line end a mounted secret usually has.
 * A missing, empty or oversized file is an error naming the setting and the path.
 */
export function readSecretFile(path: string, env: NodeJS.ProcessEnv, setting: string): string {
  const file = secretFilePath(path, env, setting);
  const ref = `\${file:${path}}`;
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_SECRET_BYTES)
      throw new SourceError(
        'SOURCE_CONFIG',
        `${setting} refers to ${ref}, which is larger than ${MAX_SECRET_BYTES} bytes: not a secret file`,
      );
    text = bytes.toString('utf8');
  } catch (err) {
    if (err instanceof SourceError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'is not readable'
          : `cannot be read (${code})`;
    throw new SourceError('SOURCE_CONFIG', `${setting} refers to ${ref}, which ${why}`);
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new SourceError('SOURCE_CONFIG', `${setting} refers to ${ref}, which is empty`);
  return value;
}
