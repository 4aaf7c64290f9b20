import type { ErrorCategory } from '../../ground/errors.ts';
import type { FieldValue } from '../../api/types.ts';
import type { SourceRecord } from '../types.ts';

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
  payload?: FieldValue[];
  attempts: number;
  /** ISO timestamp. */
  createdAt: string;
}

/** What `add` takes: an entry whose createdAt defaults to now. */
export type DeadLetterInput = Omit<DeadLetterEntry, 'createdAt'> & { createdAt?: string };
