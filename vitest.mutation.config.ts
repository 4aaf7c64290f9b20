import { defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs against each mutant of the exactly-once core
 * (stryker.config.mjs): the ones that exercise it directly, fast enough to run a few
 * hundred times. `npm test` uses vitest.config.ts and runs them too.
 */
export default defineConfig({
  test: {
    include: [
      'test/integration/write-batch.test.ts',
      'test/integration/write-batch-failures.test.ts',
      'test/integration/key-index.test.ts',
      'test/unit/sync/sources/sources-csv.test.ts',
      'test/unit/sync/sources/sources-csv-errors.test.ts',
      'test/unit/sync/sources/sources-cursor.test.ts',
      'test/unit/sync/sync-cursor.test.ts',
      'test/integration/sync-modes.test.ts',
      'test/integration/run-store-outcomes.test.ts',
      'test/integration/run-cursor-save.test.ts',
      // The one path of writeBatch that needs references to resolve: rows nobody can find.
      'test/integration/sync-references.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: 1,
  },
});
