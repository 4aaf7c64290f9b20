import { describe, it, expect } from 'vitest';
import { LIMITER_DEFAULTS, resolveLimiterSettings } from '../../../../src/api/limiter/limiter-options.ts';

describe('rate limiter options', () => {
  it('applies the documented defaults', () => {
    const s = resolveLimiterSettings({ budgetKey: 'rowbridge:budget:abc' });
    expect(s.budget.initialRate).toBe(10);
    expect(s.budget.maxRate).toBe(50);
    expect(s.maxConcurrent).toBe(8);
    expect(s.backoff51Ms).toBe(LIMITER_DEFAULTS.backoff51Ms);
    expect(s.backoff90000Ms).toBeGreaterThan(s.backoff51Ms);
  });

  it('keeps default initial and min rates inside a low maxRatePerSec', () => {
    const s = resolveLimiterSettings({ budgetKey: 'k', maxRatePerSec: 0.2 });
    expect(s.budget.initialRate).toBe(0.2);
    expect(s.budget.minRate).toBe(0.2);
  });

  it.each([
    [{ budgetKey: '' }, /budgetKey must be a non-empty string/],
    [{ budgetKey: 'k', maxRatePerSec: 0 }, /maxRatePerSec must be a finite number > 0, got 0/],
    [
      { budgetKey: 'k', initialRatePerSec: Number.NaN },
      /initialRatePerSec must be a finite number > 0, got NaN/,
    ],
    [
      { budgetKey: 'k', minRatePerSec: 20, maxRatePerSec: 10 },
      /minRatePerSec \(20\) must be <= maxRatePerSec \(10\)/,
    ],
    [
      { budgetKey: 'k', initialRatePerSec: 60 },
      /initialRatePerSec \(60\) must lie between minRatePerSec \(0.5\) and maxRatePerSec \(50\)/,
    ],
    [{ budgetKey: 'k', decreaseFactor: 1 }, /decreaseFactor must be a number in \(0, 1\), got 1/],
    [{ budgetKey: 'k', maxConcurrent: 2.5 }, /maxConcurrent must be an integer >= 1, got 2.5/],
    [{ budgetKey: 'k', backoff51Ms: -1 }, /backoff51Ms must be a finite number >= 0, got -1/],
  ])('rejects %o naming the option and what is allowed', (input, message) => {
    expect(() => resolveLimiterSettings(input)).toThrow(message);
  });
});
