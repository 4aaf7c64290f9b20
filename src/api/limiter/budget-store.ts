/**
 * Where a budget's state lives: in this process, or in Redis shared by every process
 * using the same credential. Both apply `budgetTransitions`; only the clock and the
 * storage differ.
 */
export interface BudgetStore {
  /**
   * Takes up to `count` tokens, as many as are available now (`granted`, waitMs 0); when
   * none is, says how long to wait. @param count - callers waiting in this process, default 1
   */
  acquire(count?: number): Promise<AcquireReply>;
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

/** What an acquisition reports back. */
export interface AcquireReply extends BudgetReply {
  /** Tokens taken, between 0 and the count asked for; 0 exactly when waitMs > 0. */
  granted: number;
}
