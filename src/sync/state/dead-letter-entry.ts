import type { ErrorCategory } from '../../ground/errors.ts';
import type { FieldValue } from '../../api/types.ts';
import type { SourceRecord } from '../model/types.ts';

/** One source record that could not be written, with everything needed to fix and replay it. */
export interface DeadLetterEntry {
  /** Deterministic: `${runId}:${source.position.index}` so re-processing a batch after a crash never adds a row twice. */
  id: string;
  job: string;
  runId: string;
  category: ErrorCategory;
  errorCode?: number;
  /** What is wrong, naming the field and what is allowed for mapping errors. */
  message: string;
  field?: string;
  source: SourceRecord;
  /** The row's key under the job's mapping when it failed (keyed jobs), so a later landing of the row resolves it. */
  key?: string;
  payload?: FieldValue[];
  attempts: number;
  /** ISO timestamp. */
  createdAt: string;
  /**
   * When a person's fixed record (`dlq replay --file`) replaced the source record: a
   * replay writes that record, not the row as the source has it now.
   */
  fixedAt?: string;
}

/** What `add` takes: an entry whose createdAt defaults to now. */
export type DeadLetterInput = Omit<DeadLetterEntry, 'createdAt'> & { createdAt?: string };

/**
 * Which row an entry is about, for resolving it when the row lands later: the source's
 * own id (a primary key, a row id), else the row's key. Undefined when neither is known
 * (a keyless file row). The store's Lua (`identity` in dead-letter-scripts.ts) applies
 * the same rule to stored entries.
 */
export function rowIdentity(position: { id?: string }, key: string | undefined): string | undefined {
  if (typeof position.id === 'string') return `id:${position.id}`;
  return key === undefined ? undefined : `key:${key}`;
}
