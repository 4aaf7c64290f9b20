import type { RunRecord } from '../../src/sync/state/run-store.ts';
import { parseNumberFlags } from './bench-flags.ts';
import type { NumberFlag } from './bench-flags.ts';
import type { EmulatorProcessStats } from './emulator-process.ts';

/** The flags of the throttled benches (bench/throttled.ts, bench/throttled-shared.ts), and `extra`. */
export function throttledFlags<K extends string>(script: string, extra: Record<K, NumberFlag>) {
  const flags = parseNumberFlags(script, {
    rows: { default: 60_000 },
    'batch-size': { default: 100 },
    rate: { default: 10, fractional: true, min: 0.1 },
    burst: { default: 10 },
    'initial-rate': { default: 20, fractional: true, min: 0.1 },
    'max-rate': { default: 50, fractional: true, min: 0.1 },
    ...extra,
  });
  if (flags['initial-rate'] > flags['max-rate']) {
    throw new RangeError(
      `${script}: --initial-rate (${flags['initial-rate']}) must be <= --max-rate (${flags['max-rate']})`,
    );
  }
  return flags;
}

/**
 * A throttled run against its ceiling (rate × batchSize rows/s): from enqueue to the end
 * seen (`seconds`) and over the run's own start and finish (`runSeconds`), with the
 * throttled answers and requests the emulator counted.
 */
export function ceilingFigures(
  run: { seconds: number; record: RunRecord },
  landed: EmulatorProcessStats,
  options: { rows: number; batchSize: number; rate: number },
) {
  const { rows, batchSize, rate } = options;
  const throttledAnswers = (landed.byCode['51'] ?? 0) + (landed.byCode['90000'] ?? 0);
  const rowsPerSec = rows / run.seconds;
  const ceilingRowsPerSec = rate * batchSize;
  // The run's own wall time as it recorded it (run job picked up to run finished): without
  // the wait for a worker to pick the run up and the 100 ms polling of the bench.
  const runSeconds =
    run.record.startedAt !== undefined && run.record.finishedAt !== undefined
      ? (Date.parse(run.record.finishedAt) - Date.parse(run.record.startedAt)) / 1000
      : Number.NaN;
  return {
    seconds: Math.round(run.seconds * 100) / 100,
    rowsPerSec: Math.round(rowsPerSec * 10) / 10,
    ceilingRowsPerSec,
    shareOfCeiling: Math.round((rowsPerSec / ceilingRowsPerSec) * 1000) / 1000,
    runSeconds: Math.round(runSeconds * 100) / 100,
    runShareOfCeiling: Math.round((rows / runSeconds / ceilingRowsPerSec) * 1000) / 1000,
    throttledAnswers,
    requests: landed.requests,
    throttledShare: Math.round((throttledAnswers / landed.requests) * 10_000) / 10_000,
    acceptedRequests: landed.byCode['1'] ?? 0,
    minimumWriteRequests: Math.ceil(rows / batchSize),
  };
}
