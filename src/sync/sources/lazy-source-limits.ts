/**
 * The source limits of a process with Bottleneck loaded at the first slot taken: most
 * workers never read a rate-limited source, and an idle worker's memory is measured
 * (bench/import.ts). Behaves as source-rate-limit.ts's createSourceLimits otherwise.
 */
import type { SourceGate, SourceLimits, SourceLimitsOptions } from './source-rate-limit.ts';

/** Creates the process's source limits; nothing is loaded until a gate is taken. */
export function createLazySourceLimits(options: SourceLimitsOptions): SourceLimits {
  let loaded: Promise<SourceLimits> | undefined;
  const limits = (): Promise<SourceLimits> =>
    (loaded ??= import('./source-rate-limit.ts').then((m) => m.createSourceLimits(options)));
  return {
    gate(job, sourceType, limit): SourceGate {
      return { take: async () => (await limits()).gate(job, sourceType, limit).take() };
    },
    async close() {
      if (loaded !== undefined) await (await loaded).close();
      loaded = undefined;
    },
  };
}
