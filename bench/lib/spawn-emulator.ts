import { fileURLToPath } from 'node:url';
import type {
  EmulatorFieldStats,
  EmulatorProcessConfig,
  EmulatorProcessReady,
  EmulatorProcessStats,
} from './emulator-process.ts';
import { spawnJsonChild } from './spawn-json-child.ts';

/** The emulator running in its own process (bench/lib/emulator-process.ts). */
export interface BenchEmulator extends EmulatorProcessReady {
  /** Live rows of the worksheet and the requests received, by envelope code. */
  stats(): Promise<EmulatorProcessStats>;
  /** The worksheet's live rows, the distinct values of one field, and whether `value` is one. */
  field(alias: string, value?: string): Promise<EmulatorFieldStats>;
  close(): Promise<void>;
}

/** Starts the emulator child with one app and the worksheet of `config`. */
export async function spawnEmulator(config: EmulatorProcessConfig): Promise<BenchEmulator> {
  const script = fileURLToPath(new URL('./emulator-process.ts', import.meta.url));
  const child = await spawnJsonChild<EmulatorProcessReady>(script, [JSON.stringify(config)]);
  return {
    ...child.ready,
    stats: () => child.ask<EmulatorProcessStats>({ cmd: 'stats' }),
    field: (alias, value) => child.ask<EmulatorFieldStats>({ cmd: 'field', alias, value }),
    close: () => child.close(),
  };
}
