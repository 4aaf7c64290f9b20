import type { FieldValue } from '../../api/types.ts';
import type { SourcePosition } from '../model/types.ts';

/** Why one field of one record cannot be written. */
export interface RowError {
  /** The mapping's target (field id or alias as the job spec wrote it). */
  field: string;
  /** The source column, undefined for constants. */
  column: string | undefined;
  /** The source value as text, at most 200 characters. */
  value: string;
  /** What is wrong and what is allowed. */
  reason: string;
}

/** A field whose values still need a lookup (members, departments, relations). */
export interface PendingLookup {
  /** Index into the plan's fields and into `fields`. */
  index: number;
  /** Canonical lookup inputs; `fields[index].value` holds them until resolved. */
  values: readonly string[];
}

export interface MappedRow {
  ok: true;
  /** One value per mapped field, in mapping order, `id` = field id. */
  fields: FieldValue[];
  /** Canonical string of the key field's value, when the plan has a key. */
  key?: string;
  /**
   * Content hash of the mapped payload (plan fingerprint + fields by id). Taken before
   * lookups resolve, from the lookup inputs, so an unchanged row is skipped without
   * any request, lookups included.
   */
  hash: string;
  /** Present until resolveReferences replaces the lookup inputs with ids. */
  pending?: PendingLookup[];
  position?: SourcePosition;
}

export interface RejectedRow {
  ok: false;
  /** Dead-letter category: the row is rejected, the run goes on. */
  category: 'invalid-row';
  errors: RowError[];
  position?: SourcePosition;
}

export type MapResult = MappedRow | RejectedRow;
