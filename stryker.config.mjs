// @ts-check
/**
 * `npm run test:mutation`: mutation testing of the exactly-once core (too slow for
 * `npm test`). Score and survivors in bench/README.md; the tests it runs per mutant are
 * listed in vitest.mutation.config.ts.
 *
 * One file is mutated only in part, by line range: the cursor saving of the run
 * finalizer. The range is found from the code's own landmarks, not written as numbers,
 * because the file keeps changing around them; a landmark that is gone stops the run
 * with its name instead of mutating the wrong lines.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `file:first-last` (1-based, inclusive) from the first line containing `from` to the
 * first line after it containing `to`, moved by `shift` lines (Stryker mutates only what
 * lies wholly inside the range, so a block's closing line must be in it).
 * @param {string} file
 * @param {string} from
 * @param {string} to
 * @param {number} [shift]
 */
function range(file, from, to, shift = 0) {
  const lines = readFileSync(path.join(import.meta.dirname, file), 'utf8').split('\n');
  const first = lines.findIndex((l) => l.includes(from));
  const last = first === -1 ? -1 : lines.findIndex((l, i) => i > first && l.includes(to));
  if (first === -1 || last === -1)
    throw new Error(`stryker.config.mjs: no "${first === -1 ? from : to}" in ${file}; update the range`);
  return `${file}:${first + 1}-${last + 1 + shift}`;
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  mutate: [
    // write-batch.ts and the modules it was split into (creates, updates, outcomes).
    'src/sync/write/write-batch.ts',
    'src/sync/write/create-rows.ts',
    'src/sync/write/update-rows.ts',
    'src/sync/write/batch-outcomes.ts',
    'src/sync/state/key-index.ts',
    'src/sync/sources/cursor.ts',
    'src/sync/sources/csv-source.ts',
    // The run store's outcome ledger, a file of its own since the run store was split.
    'src/sync/state/outcome-ledger.ts',
    // The finalizer up to the cursor it saves: not for a failed run, a replay or a backfill.
    range(
      'src/queue/run-processor.ts',
      'const current = await rt.runs.get(runId);',
      'await rt.runs.setCursor(spec.name, current.cursor)',
      1,
    ),
  ],
  coverageAnalysis: 'perTest',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  concurrency: 2,
  timeoutMS: 20000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
