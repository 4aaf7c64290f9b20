import type { SyncMode } from '../mapping/plan-types.ts';

/**
 * What a mapped row needs, given the worksheet row its key matched (if any):
 * `create` it, `skip` it (update mode, no such row), call it `unchanged` (the content
 * hash of the last write equals the mapped row's), or `compare` it with the row the
 * worksheet holds. The one classification of a real run (write-batch.ts) and of a dry
 * run (plan-run.ts), so the two cannot drift apart.
 */
export type RowClass =
  { kind: 'create' } | { kind: 'skip' } | { kind: 'unchanged' } | { kind: 'compare'; rowId: string };

export function classifyRow(
  mode: SyncMode,
  matched: { rowId: string; hash?: string | undefined } | undefined,
  hash: string,
  /** `run --full` trusts no saved hash: every matched row is compared. */
  trustHash: boolean,
): RowClass {
  if (mode === 'append' || matched === undefined)
    return mode === 'update' ? { kind: 'skip' } : { kind: 'create' };
  if (trustHash && matched.hash === hash) return { kind: 'unchanged' };
  return { kind: 'compare', rowId: matched.rowId };
}
