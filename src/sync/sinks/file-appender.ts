/**
 * Appends text to a file in call order. Each append resolves once the bytes are handed
 * to the OS; close syncs them to disk, so a run that reports success has its file.
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SinkError } from './sink-error.ts';

export interface FileAppender {
  append(text: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens `file` for appending on first use (creating its folder). `locate`, when given,
 * is awaited then for the path actually opened (a data-dir check); `file` names it in errors.
 */
export function createFileAppender(file: string, locate?: () => Promise<string>): FileAppender {
  let handle: FileHandle | undefined;
  let closed = false;
  // Writes chain on one promise so two overlapping write() calls still land in order.
  let tail: Promise<void> = Promise.resolve();

  const run = (task: () => Promise<void>): Promise<void> => {
    const next = tail.then(task);
    // A failed append must not poison the chain for later calls; its caller sees the error.
    tail = next.catch(() => undefined);
    return next;
  };

  return {
    append(text) {
      if (closed) return Promise.reject(new SinkError('SINK_UNAVAILABLE', `${file}: write after close`));
      return run(async () => {
        try {
          if (handle === undefined) {
            const target = locate === undefined ? file : await locate();
            await mkdir(dirname(target), { recursive: true });
            handle = await open(target, 'a');
          }
          await handle.write(text);
        } catch (err) {
          if (err instanceof SinkError) throw err;
          const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
          throw new SinkError('SINK_UNAVAILABLE', `${file}: cannot write (${code})`);
        }
      });
    },
    close() {
      closed = true;
      return run(async () => {
        if (handle === undefined) return;
        const current = handle;
        handle = undefined;
        try {
          await current.datasync();
        } finally {
          await current.close();
        }
      });
    },
  };
}
