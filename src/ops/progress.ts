/** Live counts of a run, as the progress display shows them. */
export interface ProgressCounts {
  read: number;
  written: number;
  deadLettered: number;
  /** Known once the source is fully read. */
  total?: number;
}

export interface Progress {
  update(counts: ProgressCounts): void;
  done(): void;
}

/**
 * A one-line progress bar on a terminal; on anything else (CI logs, pipes) a plain line
 * at most every `intervalMs`, so logs stay readable.
 */
export function createProgress(write: (text: string) => void, isTty: boolean, label: string, intervalMs = 5000): Progress {
  let last = 0;
  let drawn = false;
  return {
    update(c) {
      const now = Date.now();
      if (isTty) {
        const width = 30;
        const share = c.total ? Math.min(1, (c.written + c.deadLettered) / Math.max(1, c.total)) : 0;
        const bar = c.total ? `[${'#'.repeat(Math.round(share * width)).padEnd(width, '.')}] ${(share * 100).toFixed(0)}% ` : '';
        write(`\r${label} ${bar}read ${c.read}, written ${c.written}, dead-lettered ${c.deadLettered}   `);
        drawn = true;
      } else if (now - last >= intervalMs) {
        write(`${label}: read ${c.read}, written ${c.written}, dead-lettered ${c.deadLettered}${c.total ? ` of ${c.total}` : ''}\n`);
        last = now;
      }
    },
    done() {
      if (drawn) write('\n');
    },
  };
}
