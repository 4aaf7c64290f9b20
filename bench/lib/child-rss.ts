import { readFileSync } from 'node:fs';

/** Memory of another process (Linux /proc), in MiB. */
export interface ChildRss {
  /** Current resident set: `VmRSS`. */
  rssMb: number;
  /** The kernel's high-water mark of the resident set over the process's life: `VmHWM`. */
  hwmMb: number;
}

const round = (kb: number) => Math.round((kb / 1024) * 10) / 10;

/** Reads `/proc/<pid>/status`; undefined once the process is gone (a zombie has no Vm lines). */
export function readChildRss(pid: number): ChildRss | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const rss = kb('VmRSS');
  const hwm = kb('VmHWM');
  return Number.isNaN(rss) || Number.isNaN(hwm) ? undefined : { rssMb: round(rss), hwmMb: round(hwm) };
}

/** Samples a child's memory every `intervalMs` until stopped; `peak` includes the kernel's high-water mark. */
export function sampleChildRss(
  pid: number,
  intervalMs = 50,
): { stop(): { peakRssMb: number; lastRssMb: number } } {
  let peak = 0;
  let last = 0;
  const sample = () => {
    const now = readChildRss(pid);
    if (now === undefined) return;
    last = now.rssMb;
    peak = Math.max(peak, now.rssMb, now.hwmMb);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peakRssMb: peak, lastRssMb: last };
    },
  };
}
