/**
 * Where a budget's state lives: in this process, or in Redis shared by every process
 * using the same credential. Both apply `budgetTransitions`; only the clock and the
 * storage differ.
 */
export interface BudgetStore {
  /** Takes a token when one is available (waitMs 0), else says how long to wait. */
  acquire(): Promise<BudgetReply>;
  /** Pauses the budget for pauseMs and lowers its rate (once per pause). */
  throttled(pauseMs: number): Promise<BudgetReply>;
  /** Lets the rate probe upwards. */
  success(): Promise<BudgetReply>;
}

/** What a budget operation reports back. */
export interface BudgetReply {
  /** 0 after a successful acquire or for non-acquire operations; otherwise milliseconds to wait. */
  waitMs: number;
  /** The budget's rate after the operation, in requests/second. */
  rate: number;
}
