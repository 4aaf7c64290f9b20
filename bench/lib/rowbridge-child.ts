import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readChildRss, sampleChildRss } from './child-rss.ts';

const BIN = fileURLToPath(new URL('../../bin/rowbridge.js', import.meta.url));

/** What `rowbridge run JOB --json` printed, with the child's memory and time. */
export interface RowbridgeRunResult {
  exitCode: number | null;
  /** The `{run, report}` JSON the command printed (undefined when it printed none). */
  output: { run?: { status?: string; message?: string }; report?: Record<string, unknown> } | undefined;
  seconds: number;
  cpuSeconds: number | undefined;
  peakRssMb: number;
  stderrTail: string;
}

/**
 * Runs `node bin/rowbridge.js run JOB --json` as its own process, the way a user runs an
 * import, sampling its resident memory from /proc every 50 ms (the kernel's high-water
 * mark included). `nodeArgs` go before the script (e.g. `--heap-prof`).
 */
export async function runRowbridgeChild(options: {
  env: NodeJS.ProcessEnv;
  args: string[];
  nodeArgs?: string[];
}): Promise<RowbridgeRunResult> {
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, ...options.args], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const sampler = sampleChildRss(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr = (stderr + s).slice(-4000);
    if (process.env.BENCH_VERBOSE === '1') process.stderr.write(s);
  });
  // CPU of the child from /proc before it is reaped: utime + stime in clock ticks (100/s).
  let cpuSeconds: number | undefined;
  const cpuTimer = setInterval(() => (cpuSeconds = readCpuSeconds(child.pid!) ?? cpuSeconds), 200);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(cpuTimer);
  const memory = sampler.stop();
  let output: RowbridgeRunResult['output'];
  try {
    // --trace-gc (through nodeArgs) writes its lines to stdout too: `[pid:0x...] ...`.
    const gc = /^\[\d+:0x[0-9a-f]+\]/;
    if (process.env.BENCH_VERBOSE === '1')
      for (const line of stdout.split('\n')) if (gc.test(line)) process.stderr.write(`${line}\n`);
    output = JSON.parse(
      stdout
        .split('\n')
        .filter((line) => !gc.test(line))
        .join('\n'),
    ) as RowbridgeRunResult['output'];
  } catch {
    output = undefined;
  }
  return {
    exitCode: code,
    output,
    seconds: (performance.now() - started) / 1000,
    cpuSeconds,
    peakRssMb: memory.peakRssMb,
    stderrTail: stderr,
  };
}

function readCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at index 2: utime is 13, stime 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * RSS of `rowbridge worker --no-schedules` once it has started (modules loaded, Redis
 * connected, workers waiting) and sat idle for `settleMs`: what a worker costs before
 * it does anything. Stopped with SIGTERM afterwards.
 */
export async function measureWorkerStartRss(env: NodeJS.ProcessEnv, settleMs = 1500): Promise<number> {
  const child = spawn(process.execPath, [BIN, 'worker', '--no-schedules'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const look = (s: Buffer) => {
        seen = (seen + s.toString()).slice(-8000);
        if (seen.includes('worker started')) resolve();
      };
      child.stdout.on('data', look);
      child.stderr.on('data', look);
      child.once('exit', (code) =>
        reject(
          new Error(`rowbridge worker exited (${String(code)}) before it started: ${seen.slice(-1000)}`),
        ),
      );
    });
    await new Promise((r) => setTimeout(r, settleMs));
    const rss = readChildRss(child.pid!);
    if (rss === undefined) throw new Error('rowbridge worker is gone');
    return rss.rssMb;
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }
}
