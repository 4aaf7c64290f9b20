import type { Logger } from '../ground/logger.ts';

/** Live counts of long CLI work (a run, a plan), as the progress display shows them. */
export interface ProgressCounts {
  read: number;
  /** Created + updated: rows the worksheet (or sink) took. */
  written: number;
  /** Rows already as the source has them (unchanged, skipped): settled, not written. */
  unchanged?: number;
  deadLettered: number;
  /** Known once the source is fully read. */
  total?: number;
  /** Work before the writes, shown instead of the counts: "matching keys: page 3 of 5, ...". */
  phase?: string;
}

export interface Progress {
  update(counts: ProgressCounts): void;
  done(): void;
}

export interface ProgressOptions {
  label: string;
  /** A terminal gets a redrawn one-line bar. */
  isTty: boolean;
  /** Where the bar is drawn (stderr, so stdout stays clean for --json). */
  write: (text: string) => void;
  /** Anything but a terminal (CI logs, pipes, containers) gets structured log lines. */
  logger: Logger;
  /** Least time between two log lines. @defaultValue 5000 */
  intervalMs?: number;
}

/** A progress bar on a terminal; elsewhere a structured `progress` log line every few seconds. */
export function createProgress(options: ProgressOptions): Progress {
  const { label, isTty, write, logger } = options;
  const interval = options.intervalMs ?? 5000;
  let last = 0;
  let drawn = false;
  let latest: ProgressCounts | undefined;
  return {
    update(c) {
      latest = c;
      if (isTty && c.phase !== undefined && c.phase !== '') {
        write(`\r${label} ${c.phase}   `);
        drawn = true;
        return;
      }
      if (isTty) {
        const width = 30;
        const settled = c.written + (c.unchanged ?? 0) + c.deadLettered;
        const share = c.total ? Math.min(1, settled / Math.max(1, c.total)) : 0;
        const bar = c.total
          ? `[${'#'.repeat(Math.round(share * width)).padEnd(width, '.')}] ${(share * 100).toFixed(0)}% `
          : '';
        const unchanged = c.unchanged ? `, unchanged ${c.unchanged}` : '';
        write(
          `\r${label} ${bar}read ${c.read}, written ${c.written}${unchanged}, dead-lettered ${c.deadLettered}   `,
        );
        drawn = true;
        return;
      }
      const now = Date.now();
      if (now - last >= interval) {
        logger.info({ progress: label, ...c }, 'progress');
        last = now;
      }
    },
    done() {
      if (drawn) write('\n');
      else if (latest !== undefined && !isTty)
        logger.info({ progress: label, ...latest, done: true }, 'progress');
    },
  };
}
