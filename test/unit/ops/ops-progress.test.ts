import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/ground/logger.ts';
import { createProgress } from '../../../src/ops/progress.ts';

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
