import type { IdGenerator } from './ids.ts';
import type { ResolvedOptions } from './options.ts';
import type { EmulatorState } from './state/records.ts';

/**
 * What the emulator's modules share. `state` is reset in place and `options` is changed
 * in place by `setOptions`, so modules read both at call time and never cache them.
 */
export interface EmulatorDeps {
  state: EmulatorState;
  ids: IdGenerator;
  options: ResolvedOptions;
}

export function isoNow(deps: EmulatorDeps): string {
  return new Date(deps.options.now()).toISOString();
}
