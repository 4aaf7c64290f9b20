/**
 * The Redis key patterns a test file has used, so the leak check (leak-check.ts) can
 * look for keys the file left behind. The harness and `deleteKeys` record theirs; a
 * file that keeps keys under its own prefix calls `recordRedisPattern` itself.
 */
const patterns = new Set<string>();

/** Records a SCAN pattern (`rbtest-x-123:*`) whose keys the file must delete before it ends. */
export function recordRedisPattern(pattern: string): void {
  patterns.add(pattern);
}

/** The patterns recorded so far in this test file (each file runs in its own module graph). */
export function recordedRedisPatterns(): string[] {
  return [...patterns];
}
