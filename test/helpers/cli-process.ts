/**
 * The rowbridge CLI as a user types it, from tests that walk a failure path end to end,
 * and the ledger job those tests count rows of.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Harness } from './sync-harness.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

/** How a command ended: its exit code (or 'hung' after 120 s) and what it printed. */
export interface Finished {
  code: number | null | 'hung';
  stdout: string;
  stderr: string;
}

/** A running command: `exited` settles when it exits; `stderr()` is what it printed so far. */
export interface CliProcess {
  child: ChildProcess;
  exited: Promise<Finished>;
  stderr: () => string;
}

/** Polls `check` every 50 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `rowbridge ARGS` with the harness's environment; the child is added to `children` to be killed after. */
export function spawnCli(
  h: Harness,
  children: ChildProcess[],
  args: string[],
  env: NodeJS.ProcessEnv = {},
): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...h.env, ROWBRIDGE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<Finished>((resolve) => {
    const timer = setTimeout(() => resolve({ code: 'hung', stdout, stderr }), 120_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, exited, stderr: () => stderr };
}

/** Kills the children still running (SIGKILL) and empties the list: a test's afterEach. */
export function killChildren(children: ChildProcess[]): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.length = 0;
}

/** A Ledger worksheet and job `ledger` reading `rows` entries L-0.. from a CSV; returns the worksheet id. */
export async function writeLedgerJob(h: Harness, rows: number, mode: 'append' | 'upsert'): Promise<string> {
  const ws = h.createWorksheet({
    name: 'Ledger',
    alias: 'ledger',
    fields: [
      { name: 'Entry', alias: 'entry', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
    ],
  });
  const lines = ['entry,amount', ...Array.from({ length: rows }, (_, i) => `L-${i},${i}`)];
  await h.writeFile('ledger.csv', `${lines.join('\n')}\n`);
  await h.writeJob(
    'ledger',
    `name: ledger
source: { type: csv, path: ./ledger.csv }
target: { worksheet: ledger, mode: ${mode}${mode === 'upsert' ? ', key: entry' : ''}, batchSize: 50 }
fields: { entry: entry, amount: amount }
`,
  );
  return ws;
}

/** Job `backfill`: the ledger CSV of {@link writeLedgerJob} upserted, its range read by `amount`. */
export async function writeBackfillJob(h: Harness): Promise<void> {
  await h.writeJob(
    'backfill',
    `name: backfill
source: { type: csv, path: ./ledger.csv }
target: { worksheet: ledger, mode: upsert, key: entry, batchSize: 50 }
fields: { entry: entry, amount: amount }
incremental: { cursor: amount }
`,
  );
}
