/**
 * A file written beside its target and renamed over it only when complete: a reader, a
 * crash or a failed run never sees half a file, only the previous one or the new one.
 * The aside file sits in the target's folder (rename is atomic only within a file
 * system) under a name starting with `.<name>.rowbridge-`; leftovers of a process that
 * died are removed when the next one opens its first aside file of that target.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SinkError } from './sink-error.ts';

export interface AsideFile {
  /** The aside file's path (valid after the first append). */
  readonly path: string;
  append(text: string): Promise<void>;
  /** Flushes the bytes written so far (before reading the aside file back). */
  flush(): Promise<void>;
  /** Syncs the aside file and renames it over the target. */
  commit(): Promise<void>;
  /** Removes the aside file; the target stays as it was. */
  discard(): Promise<void>;
}

function failure(shown: string, err: unknown): SinkError {
  if (err instanceof SinkError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
  return new SinkError('SINK_UNAVAILABLE', `${shown}: cannot write (${code})`);
}

/** Removes aside files of `target` that an earlier process left behind when it died. */
async function removeLeftovers(target: string): Promise<void> {
  const prefix = `.${basename(target)}.rowbridge-`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names)
    if (name.startsWith(prefix) && name.endsWith('.tmp'))
      await unlink(join(dirname(target), name)).catch(() => undefined);
}

/** How an aside file treats the leftovers beside it. */
export interface AsideFileOptions {
  /**
   * Whether opening removes the target's leftover aside files. A second aside file of
   * the same target in the same run (a merge's rewrite) passes false: the first one
   * swept when it opened, and is itself still to be read back.
   * @defaultValue true
   */
  sweepLeftovers?: boolean;
}

/**
 * Creates the aside file of the target `locate()` gives (awaited on first use, so a
 * data-dir check runs before anything is created); `shown` names the file in errors.
 */
export function createAsideFile(
  shown: string,
  locate: () => Promise<string>,
  options: AsideFileOptions = {},
): AsideFile {
  let handle: FileHandle | undefined;
  let target = '';
  let path = '';
  let done = false;

  const ensureOpen = async (): Promise<FileHandle> => {
    if (handle !== undefined) return handle;
    target = await locate();
    await mkdir(dirname(target), { recursive: true });
    if (options.sweepLeftovers !== false) await removeLeftovers(target);
    path = join(
      dirname(target),
      `.${basename(target)}.rowbridge-${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
    );
    handle = await open(path, 'wx');
    return handle;
  };

  const discard = async (): Promise<void> => {
    done = true;
    const current = handle;
    handle = undefined;
    await current?.close().catch(() => undefined);
    if (path !== '') await unlink(path).catch(() => undefined);
  };

  return {
    get path() {
      return path;
    },
    async append(text) {
      if (done) throw new SinkError('SINK_UNAVAILABLE', `${shown}: write after close`);
      try {
        await (await ensureOpen()).write(text);
      } catch (err) {
        throw failure(shown, err);
      }
    },
    async flush() {
      await handle?.datasync();
    },
    async commit() {
      done = true;
      try {
        const current = await ensureOpen();
        await current.datasync();
        await current.close();
        handle = undefined;
        // The new file keeps the permissions a person gave the old one.
        const old = await stat(target).catch(() => undefined);
        if (old !== undefined) await chmod(path, old.mode & 0o7777);
        await rename(path, target);
        // The rename itself is made durable by syncing the folder's entry.
        const folder = await open(dirname(target), 'r');
        await folder.sync().finally(() => folder.close());
      } catch (err) {
        await discard();
        throw failure(shown, err);
      }
    },
    discard,
  };
}
