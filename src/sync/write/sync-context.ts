import type { FieldValue } from '../../api/types.ts';
import type { RowsResource } from '../../api/resources/rows.ts';
import type { Logger } from '../../ground/logger.ts';
import type { ChangeSetGroup } from '../mapping/group-change-sets.ts';
import type { MappingPlan, SyncMode } from '../mapping/plan-types.ts';
import type { RowComparison } from '../mapping/row-matches.ts';
import type { DeadLetterStore } from '../state/dead-letter-store.ts';
import type { KeyIndex } from '../state/key-index.ts';
import type { RunStore } from '../state/run-store.ts';
import type { NormalisedRow } from '../../api/types.ts';
import type { Failure, RowToWrite } from '../batch/batch-row.ts';

/**
 * Everything writing a batch needs, decided once per run and process: the compiled
 * mapping, the stores, and the worksheet reads the writer makes (key lookups for
 * reconciliation, current rows for change sets, references).
 */
export interface SyncContext {
  runId: string;
  job: string;
  /** The BullMQ attempt (1-based), recorded on dead letters. */
  attempt: number;
  mode: SyncMode;
  worksheetId: string;
  triggerWorkflow: boolean;
  batchSize: number;
  plan: MappingPlan;
  rows: RowsResource;
  /** The key → row index (absent in append mode). */
  index: KeyIndex | undefined;
  /**
   * `run --full`: a saved content hash never settles a row as unchanged; every matched
   * row is compared with what the worksheet holds, so a damaged worksheet is repaired.
   */
  full: boolean;
  /**
   * The run filled the index by a full scan: a key it does not know is in no worksheet
   * row. False in incremental runs and replays, where such keys are looked up first.
   */
  indexComplete: boolean;
  runs: RunStore;
  deadLetters: DeadLetterStore;
  log: Logger;
  /**
   * Resolves members, departments and relations of the rows in place; rows that
   * cannot be resolved come back with the reason.
   */
  resolveReferences(rows: RowToWrite[]): Promise<Map<number, Failure>>;
  /** Worksheet rows holding these keys → their row ids. */
  lookupKeys(keys: readonly string[]): Promise<Map<string, string>>;
  /** Worksheet rows holding these keys, whole (for comparing without another read). */
  findByKeys(keys: readonly string[]): Promise<Map<string, NormalisedRow>>;
  /** Current rows by id (deleted ones are absent). */
  fetchRows(rowIds: readonly string[]): Promise<Map<string, NormalisedRow>>;
  compare(fields: readonly FieldValue[], existing: NormalisedRow): RowComparison;
  groupChangeSets(
    updates: ReadonlyArray<{ rowId: string; changed: readonly FieldValue[] }>,
  ): ChangeSetGroup[];
}
