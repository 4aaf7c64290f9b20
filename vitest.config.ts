import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration files share one Redis and one Postgres; each uses its own prefix/schema,
    // but two cores are better spent on fewer, steadier workers.
    maxWorkers: 2,
    // One forked process per file: the leak check tells a file's Redis keys by its pid.
    pool: 'forks',
    setupFiles: ['./test/helpers/leak-check.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
