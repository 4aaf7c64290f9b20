import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/ground/logger.ts';
import { createProgress } from '../../../src/ops/progress.ts';
import { describeScan } from '../../../src/sync/write/key-scan.ts';

function sink(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('progress', () => {
  it('draws a one-line bar on a terminal', () => {
    const drawn: string[] = [];
    const { stream, lines } = sink();
    const p = createProgress({
      label: 'run orders',
      isTty: true,
      write: (t) => drawn.push(t),
      logger: createLogger({ destination: stream }),
    });
    p.update({ read: 10, written: 5, deadLettered: 0, total: 10 });
    p.update({ read: 10, written: 9, deadLettered: 1, total: 10 });
    p.done();
    expect(drawn[0]).toMatch(/^\rrun orders \[#{15}\.{15}\] 50% read 10, written 5, dead-lettered 0/);
    expect(drawn[1]).toMatch(/\[#{30}\] 100%/);
    expect(drawn.at(-1)).toBe('\n');
    expect(lines()).toEqual([]);
  });

  it('shows the phase instead of the counts while the run matches keys', () => {
    const drawn: string[] = [];
    const { stream } = sink();
    const p = createProgress({
      label: 'run orders',
      isTty: true,
      write: (t) => drawn.push(t),
      logger: createLogger({ destination: stream }),
    });
    const phase = describeScan({
      page: 300,
      pages: 503,
      rows: 300_000,
      rowsPerSecond: 9_800.4,
      etaSeconds: 20.2,
    });
    p.update({ read: 0, written: 0, deadLettered: 0, phase });
    p.update({ read: 10, written: 5, deadLettered: 0, phase: '' });
    expect(drawn[0]).toBe('\rrun orders matching keys: page 300 of 503, 9,800 rows/s, ETA 21 s   ');
    expect(drawn[1]).toMatch(/^\rrun orders read 10, written 5/);
  });

  it('logs structured lines elsewhere, at most one per interval, and a last one when done', () => {
    const drawn: string[] = [];
    const { stream, lines } = sink();
    const p = createProgress({
      label: 'run orders',
      isTty: false,
      write: (t) => drawn.push(t),
      logger: createLogger({ destination: stream }),
      intervalMs: 60_000,
    });
    p.update({ read: 1, written: 1, deadLettered: 0 });
    p.update({ read: 2, written: 2, deadLettered: 0 });
    p.done();
    expect(drawn).toEqual([]);
    expect(lines().map((l) => [l.msg, l.progress, l.written, l.done])).toEqual([
      ['progress', 'run orders', 1, undefined],
      ['progress', 'run orders', 2, true],
    ]);
  });
});
