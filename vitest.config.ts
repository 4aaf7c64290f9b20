import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration files share one Redis and one Postgres; each uses its own prefix/schema.
    // Three workers on two cores: most integration time is spent waiting (on child
    // processes, servers, cursor margins), and 2 left `npm test` at about 16 minutes.
    maxWorkers: 3,
    // One forked process per file: the leak check tells a file's Redis keys by its pid.
    pool: 'forks',
    setupFiles: ['./test/helpers/leak-check.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
