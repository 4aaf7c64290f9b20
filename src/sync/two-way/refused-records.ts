/**
 * The records a two-way run could not write, as the run reports them: which side refused
 * each (the worksheet, or the other side: a table or another worksheet), the record by its
 * match key, the field and the platform's code when it gave one. The run goes on without
 * them; each stays different on the two sides, so the next run tries it again
 * (queue/two-way-dead-letters.ts makes them the job's dead letters until then).
 */
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { SideRecord } from './two-way-plan-types.ts';

/** A record a side refused: written on neither side for what was refused, tried again by the next run. */
export interface RejectedRecord {
  /** The link's table key, or the ref of a create (the record's id on the side it was read from). */
  key: string;
  /** The side that refused it, and that side named for a person (`worksheet people`). */
  side?: 'worksheet' | 'source';
  where?: string;
  /** The record for a person: its match key (the job's `key` fields' values) and its id on the side read. */
  record?: string;
  /** The field refused, as the job names it on the side that refused it. */
  field?: string;
  /** The platform's error code, when it answered one. */
  errorCode?: number;
  reason: string;
}

/** Why a record was refused, as a side tells it. */
export interface Refusal {
  field?: string;
  errorCode?: number;
  reason: string;
}

/** Collects a run's refused records into `into` (the report's list). */
export interface RefusedRecords {
  /**
   * `side` refused a record: an update of the link `key` or a create into the worksheet
   * (`key` the table record's id), or a create into the other side (`created`: `key` the
   * worksheet row's id).
   */
  add(side: 'worksheet' | 'source', key: string, refusal: Refusal, created?: 'source'): void;
  /** Table keys of the refused records, for the next run to read whole again. */
  tableKeys(): string[];
}

/** Records refusals of `spec`'s run; `records` are both sides as read, for match keys. */
export function createRefusedRecords(
  spec: JobSpec,
  records: { source: readonly SideRecord[]; worksheet: readonly SideRecord[] },
  into: RejectedRecord[],
): RefusedRecords {
  const source = spec.source;
  const where = {
    worksheet: `worksheet ${spec.target?.worksheet ?? ''}`,
    source:
      source.type === 'worksheet'
        ? `source worksheet ${source.worksheet}`
        : `source table ${'table' in source ? String(source.table) : ''}`,
  };
  const keys: Partial<Record<'source' | 'worksheet', Map<string, string>>> = {};
  const matchKey = (of: 'source' | 'worksheet', id: string) => {
    keys[of] ??= new Map(records[of].map((r) => [r.id, r.matchKey]));
    return keys[of].get(id);
  };
  const tableKeys: string[] = [];
  return {
    add(side, key, refusal, created) {
      const of = created === 'source' ? 'worksheet' : 'source';
      const k = matchKey(of, key);
      const id = of === 'worksheet' ? `worksheet row ${key}` : `source record ${key}`;
      const record = k === undefined || k === '' ? id : `${k.replaceAll('\u001f', ', ')} (${id})`;
      into.push({ key, side, where: where[side], record, ...refusal });
      if (created !== 'source') tableKeys.push(key);
    },
    tableKeys: () => [...new Set(tableKeys)],
  };
}

/** A refusal of the push mapping (an option the worksheet lacks, a key no related row holds). */
export function mappingRefusal(errors: ReadonlyArray<{ field: string; reason: string }>): Refusal {
  const first = errors[0];
  return {
    ...(first === undefined ? {} : { field: first.field }),
    reason: errors.map((e) => `${e.field}: ${e.reason}`).join('; '),
  };
}
