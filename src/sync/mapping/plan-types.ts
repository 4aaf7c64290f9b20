/**
 * The compiled form of a job's field mapping: everything that can be decided once per
 * run (field ids, type names, option indexes, date formats, zones, constants, defaults)
 * is decided in validateMapping, so mapping a row is a loop of precompiled coercers.
 */
import type { FieldTypeName } from '../../api/field-types.ts';
import type { FieldMapping } from '../model/types.ts';
import type { Coercer } from './coerce-result.ts';
import type { OptionIndex } from './option-index.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';

/** How a job writes: `append` only creates, `update` only updates matched rows, `upsert` does both, `mirror` also deletes. */
export type SyncMode = 'append' | 'upsert' | 'update' | 'mirror';

export interface ValidateMappingOptions {
  mode: SyncMode;
  /**
   * Target field (id or alias), or several for a composite key, whose values match
   * source records to worksheet rows. Required except in `append`.
   */
  key?: string | readonly string[] | undefined;
  /**
   * A Relation field may be (part of) the key: a two-way job matches records by their
   * related rows' keys (two-way-rows.ts), never by this plan's key lookups.
   * @defaultValue false
   */
  relationKeys?: boolean | undefined;
  /** The job spec's file, named in the error message. */
  jobFile?: string | undefined;
  /**
   * IANA zone the platform reads `YYYY-MM-DD HH:mm:ss` in (the organisation's zone when
   * the platform shows times organisation-local, platform notes §5).
   * @defaultValue `'UTC'`
   */
  targetTimezone?: string | undefined;
}

/** A lookup a field's values need before writing. */
export type ReferenceSpec =
  | { kind: 'member'; by: 'name' | 'email' }
  | { kind: 'department'; by: 'name' }
  | { kind: 'relation'; worksheetId: string; keyField: string };

/** One mapped worksheet field, ready for per-row coercion. */
export interface PlannedField {
  /** The target as the job spec wrote it (id or alias): what errors name. */
  readonly target: string;
  readonly id: string;
  readonly alias: string | undefined;
  readonly name: string;
  readonly type: FieldTypeName;
  readonly required: boolean;
  /** Source column the value comes from; undefined for constants. */
  readonly column: string | undefined;
  /** Written as an array (options, ids, attachments). */
  readonly isArray: boolean;
  /** A whitespace-only string counts as empty (every type but the text-like ones, where spaces are content). */
  readonly blankIsEmpty: boolean;
  readonly options: OptionIndex | undefined;
  readonly precision: number | undefined;
  readonly reference: ReferenceSpec | undefined;
  /** Field-value `type` always sent (attachments: "0", replace, so a re-sync does not append copies). */
  readonly writeType: string | undefined;
  readonly coerce: Coercer;
  /** The mapping's `trim`, `map`, `trueValues`/`falseValues` and `decimal`, run before the empty check; undefined when it has none. */
  readonly transform: ((raw: unknown) => unknown) | undefined;
  /** Whether the mapping is a constant `value` (already coerced into `constant`). */
  readonly hasConstant: boolean;
  readonly constant: unknown;
  /** What an empty source value becomes: the coerced default, a clearing value, or a `required` failure. */
  readonly whenEmpty: unknown;
  readonly mapping: FieldMapping;
}

export interface MappingPlan {
  readonly worksheetId: string;
  readonly worksheetName: string;
  readonly mode: SyncMode;
  /** In mapping order. */
  readonly fields: readonly PlannedField[];
  /** Indexes into `fields`, sorted by field id: the canonical order of hashes and change sets. */
  readonly hashOrder: readonly number[];
  /** Index into `fields` of the (first) key field; undefined when the plan has no key. */
  readonly keyIndex: number | undefined;
  /** Indexes into `fields` of every key field, in the job spec's order (one unless composite). */
  readonly keyIndexes: readonly number[];
  /** Mapped fields by field id and by alias. */
  readonly byTarget: ReadonlyMap<string, PlannedField>;
  /** The zone DateTime values are written in. */
  readonly targetClock: ZoneClock;
  /** Hash of the mapping and the mapped fields' types: part of every row hash, so editing the mapping rewrites rows once. */
  readonly fingerprint: string;
}
