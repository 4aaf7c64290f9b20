import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * A helper process of a benchmark (a server that must not share the measured process's
 * CPU or heap), spoken to in JSON lines: its first stdout line says it is ready, then it
 * answers every command line written to its stdin with one line.
 */
export interface JsonChild<Ready> {
  /** The child's first stdout line, parsed. */
  readonly ready: Ready;
  /** Sends one command and resolves to the child's answer to it (answers come in order). */
  ask<T>(command: unknown): Promise<T>;
  /** Closes the child's stdin (its signal to shut down) and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * Starts `node <script> ...args` with its stderr passed through. Rejects when the child
 * exits or prints something that is not JSON before it is ready.
 */
export async function spawnJsonChild<Ready>(
  script: string,
  args: readonly string[] = [],
): Promise<JsonChild<Ready>> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  let exited: Error | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = new Error(`${script} exited (code ${String(code)}, signal ${String(signal)})`);
      for (const w of waiting.splice(0)) w.reject(exited);
      resolve();
    });
  });
  child.once('error', (err) => {
    for (const w of waiting.splice(0)) w.reject(err);
  });
  lines.on('line', (line) => waiting.shift()?.resolve(line));

  const nextLine = (): Promise<string> =>
    exited !== undefined
      ? Promise.reject(exited)
      : new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  const parse = (line: string): unknown => {
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`${script} printed a line that is not JSON: ${line.slice(0, 200)}`);
    }
  };

  let ready: Ready;
  try {
    ready = parse(await nextLine()) as Ready;
  } catch (err) {
    child.kill();
    throw err;
  }
  return {
    ready,
    async ask<T>(command: unknown): Promise<T> {
      const answer = nextLine();
      child.stdin.write(`${JSON.stringify(command)}\n`);
      const parsed = parse(await answer) as { error?: string };
      if (typeof parsed === 'object' && parsed !== null && typeof parsed.error === 'string') {
        throw new Error(`${script}: ${parsed.error}`);
      }
      return parsed as T;
    },
    async close() {
      if (exited === undefined) child.stdin.end();
      await exitPromise;
    },
  };
}
