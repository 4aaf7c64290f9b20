/**
 * `tap | rowbridge singer JOB` with a recorded tap output (test/fixtures/singer/orders.jsonl:
 * two streams, a schema change, an ACTIVATE_VERSION, four STATEs, a record that cannot be
 * written and a record sent again with a new total): rows land, each STATE is printed only
 * once the records before it are in the worksheet, and a `kill -9` followed by the tap
 * restarted from the last STATE printed leaves one row per key.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killChildren, until } from '../helpers/cli-process.ts';
import type { Finished } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');
const TAP = readFileSync(path.resolve(import.meta.dirname, '../fixtures/singer/orders.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l !== '');
const messages = TAP.map(
  (l) => JSON.parse(l) as { type: string; stream?: string; record?: { id: string }; value?: unknown },
);
/** Indexes of the fixture's STATE lines. */
const STATES = messages.flatMap((m, i) => (m.type === 'STATE' ? [i] : []));
/** The order that cannot be written (its total is "n/a"). */
const BAD = 'O-10';

/** Ids of the orders the tap sent before line index `end`, less the one that is dead-lettered. */
function ordersBefore(end: number): Set<string> {
  const ids = messages
    .slice(0, end)
    .filter((m) => m.type === 'RECORD' && m.stream === 'orders')
    .map((m) => m.record!.id);
  return new Set(ids.filter((id) => id !== BAD));
}

interface Singer {
  child: ChildProcess;
  exited: Promise<Finished>;
  stdoutLines: () => string[];
}

describe('singer', { timeout: 120_000 }, () => {
  let h: Harness | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    killChildren(children);
    await h?.close();
    h = undefined;
  });

  async function setUp(
    name: string,
    faults?: { seed: number; latencyMs: [number, number]; writesOnly: boolean },
  ) {
    h = await createHarness(name, faults === undefined ? {} : { faults });
    const ws = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'Order', alias: 'order_no', type: '2', required: true, isTitle: true },
        { name: 'Customer', alias: 'customer', type: '2' },
        { name: 'Amount', alias: 'amount', type: '6' },
        { name: 'Note', alias: 'note', type: '2' },
      ],
    });
    await h.writeJob(
      'shop-orders',
      `name: shop-orders
source: { type: singer, stream: orders }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: 1 }
fields:
  order_no: id
  customer: customer_id
  amount: total
  note: { from: note, default: "" }
`,
    );
    return ws;
  }

  /** `rowbridge singer shop-orders` with its stdin open; `onLine` sees each stdout line as it comes. */
  function singer(args: string[], onLine: (line: string) => void = () => undefined): Singer {
    const child = spawn(process.execPath, [CLI, 'singer', 'shop-orders', '--chunk-seconds', '0', ...args], {
      env: { ...process.env, ...h!.env, ROWBRIDGE_LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      const before = stdout.split('\n').length - 1;
      stdout += c.toString();
      for (const line of stdout.split('\n').slice(before, -1)) onLine(line);
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<Finished>((resolve) => {
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
    return { child, exited, stdoutLines: () => stdout.split('\n').filter((l) => l !== '') };
  }

  const orderIds = (ws: string) => h!.emulator.state.rows(ws).map((r) => String(r.values.order_no));

  it('writes the stream, dead-letters the bad record, and prints each STATE only once the records before it landed', async () => {
    const ws = await setUp('singer-stream');
    const early: string[] = [];
    const run = singer([], (line) => {
      // Checked the moment the line arrives: the rows it covers must be there already.
      const k = STATES.findIndex((i) => JSON.stringify(messages[i]!.value) === line);
      const landed = new Set(orderIds(ws));
      const missing = [...ordersBefore(STATES[k]!)].filter((id) => !landed.has(id));
      if (missing.length > 0) early.push(`STATE ${k + 1} printed before ${missing.join(', ')} landed`);
    });
    run.child.stdin!.end(`${TAP.join('\n')}\n`);
    const done = await run.exited;
    expect(done.code, done.stderr).toBe(2);
    expect(done.stdout.split('\n').filter((l) => l !== '')).toEqual(
      STATES.map((i) => JSON.stringify(messages[i]!.value)),
    );
    expect(early).toEqual([]);
    expect(orderIds(ws).sort()).toEqual([...ordersBefore(TAP.length)].sort());
    const o3 = h!.emulator.state.rows(ws).find((r) => r.values.order_no === 'O-3')!;
    expect(o3.values).toMatchObject({ amount: 35, note: 'refund 5', customer: 'C-1' });
    const dead = await h!.rt.deadLetters.counts({ job: 'shop-orders' });
    expect(Object.values(dead).reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('kill -9 mid-chunk, then the tap restarted from the last STATE printed: one row per key', async () => {
    // Writes are slow and one at a time, so the kill lands while a chunk is half written.
    const ws = await setUp('singer-kill', { seed: 7, latencyMs: [300, 300], writesOnly: true });
    const first = singer(['--concurrency', '1']);
    // Up to the third STATE: chunks 1 and 2 end at theirs, chunk 3 (O-8..O-11) is written next.
    first.child.stdin!.write(`${TAP.slice(0, STATES[2]! + 1).join('\n')}\n`);
    await until(() => orderIds(ws).includes('O-8'), 60_000, 'the third chunk to start landing');
    first.child.kill('SIGKILL');
    await first.exited;
    const printed = first.stdoutLines();
    expect(printed).toEqual(STATES.slice(0, 2).map((i) => JSON.stringify(messages[i]!.value)));
    const landedBefore = orderIds(ws);
    expect(landedBefore).toContain('O-8');
    expect(landedBefore).not.toContain('O-11');

    // The tap, started with --state of the last line printed: its schemas, then what follows that bookmark.
    const from = STATES.find((i) => JSON.stringify(messages[i]!.value) === printed.at(-1))!;
    const schemas = TAP.filter((_, i) => i < from && messages[i]!.type === 'SCHEMA');
    const again = singer([]);
    again.child.stdin!.end(`${[...schemas, ...TAP.slice(from + 1)].join('\n')}\n`);
    const done = await again.exited;
    expect(done.code, done.stderr).toBe(2);
    expect(done.stderr).toContain('did not finish');
    expect(done.stdout.split('\n').filter((l) => l !== '')).toEqual(
      STATES.slice(2).map((i) => JSON.stringify(messages[i]!.value)),
    );
    const ids = orderIds(ws);
    expect(ids.length).toBe(new Set(ids).size);
    expect(ids.sort()).toEqual([...ordersBefore(TAP.length)].sort());
  });

  it('a SCHEMA lacking a mapped property stops before the records after it; the STATEs before it are printed', async () => {
    const ws = await setUp('singer-schema');
    const broken = TAP.map((l, i) => (i === 13 ? l.replace('"total":{"type":["null","number"]},', '') : l));
    expect(broken[13]).not.toContain('"total"');
    const run = singer([]);
    run.child.stdin!.end(`${broken.join('\n')}\n`);
    const done = await run.exited;
    expect(done.code).toBe(1);
    expect(done.stderr).toContain(
      'job shop-orders: stdin line 14: the SCHEMA of stream orders lacks a property the mapping reads; no record after it was written:\n  - amount: { from: total }: no such property\n  its properties: id, customer_id, updated_at, note',
    );
    expect(done.stdout.split('\n').filter((l) => l !== '')).toEqual(
      STATES.slice(0, 2).map((i) => JSON.stringify(messages[i]!.value)),
    );
    expect(orderIds(ws).sort()).toEqual([...ordersBefore(13)].sort());
  });
});
