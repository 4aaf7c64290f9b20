import type { BudgetStore } from './budget-store.ts';
import { budgetTransitions } from './budget-transitions.ts';
import type { BudgetConfig, BudgetState } from './budget-transitions.ts';

/** Dependencies of the in-process budget. */
export interface MemoryBudgetStoreDeps {
  config: BudgetConfig;
  /** Milliseconds clock. @defaultValue Date.now */
  now?: () => number;
}

/** A budget held in this process only: single-process runs and unit tests. */
export function createMemoryBudgetStore(deps: MemoryBudgetStoreDeps): BudgetStore {
  const { config } = deps;
  const now = deps.now ?? Date.now;
  let state: BudgetState = budgetTransitions.initial(config, now());

  return {
    acquire(count = 1) {
      const result = budgetTransitions.acquire(state, config, now(), count);
      state = result.state;
      return Promise.resolve({ waitMs: result.waitMs, rate: state.rate, granted: result.granted });
    },
    throttled(pauseMs) {
      state = budgetTransitions.throttled(state, config, now(), pauseMs);
      return Promise.resolve({ waitMs: 0, rate: state.rate });
    },
    success() {
      state = budgetTransitions.success(state, config, now());
      return Promise.resolve({ waitMs: 0, rate: state.rate });
    },
  };
}
