/** Memory of this process over a measured stretch, in MiB. */
export interface RssFigures {
  /** Highest `memoryUsage().rss` seen by the sampler. */
  peakRssMb: number;
  /** `resourceUsage().maxRSS`: the kernel's high-water mark over the process's whole life. */
  maxRssMb: number;
  /** RSS when sampling started (runtime, modules, connections). */
  startRssMb: number;
  samples: number;
}

export interface RssSampler {
  stop(): RssFigures;
}

const MB = 1024 * 1024;
const round = (x: number) => Math.round(x * 10) / 10;

/**
 * Samples RSS every `intervalMs` until stopped. The kernel's maxRSS catches peaks
 * between samples but also anything before the measured stretch; the sampled peak
 * covers the stretch only. Both are reported.
 */
export function startRssSampler(intervalMs = 100): RssSampler {
  const startRss = process.memoryUsage.rss();
  let peak = startRss;
  let samples = 1;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    samples += 1;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return {
        peakRssMb: round(peak / MB),
        // maxRSS is in kilobytes.
        maxRssMb: round((process.resourceUsage().maxRSS * 1024) / MB),
        startRssMb: round(startRss / MB),
        samples: samples + 1,
      };
    },
  };
}
