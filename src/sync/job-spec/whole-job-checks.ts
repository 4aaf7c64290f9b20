/**
 * The rules of a job spec that span its parts (target and incremental, source and sink,
 * the mode and the source type): run on the raw value, even when parts are invalid, so
 * one pass reports every problem.
 */
import type { z } from 'zod';
import { describeValue } from './schema-checks.ts';
import { SOURCE_TYPES } from './source-schemas.ts';
import { checkTwoWayWorksheetSource } from './two-way-worksheet-source.ts';

/** Adds an issue for each rule across the job's parts that `value` breaks. */
export function checkJobAsWhole(value: unknown, ctx: z.RefinementCtx): void {
  if (!isRecord(value)) return;
  const { target, sink, source, fields, incremental } = value;
  if (isRecord(target) && target.mode === 'mirror' && incremental !== undefined) {
    // A mirror deletes the rows its source does not have; an incremental read has only
    // the changed ones, so together they would delete everything else.
    ctx.addIssue({
      code: 'custom',
      path: ['incremental'],
      message:
        'cannot be used with mode mirror: a mirror must read the whole source to know which rows to delete',
    });
  }
  if (isRecord(source) && source.cursorColumn !== undefined && incremental !== undefined) {
    // Two cursor settings would each save progress of their own: which one a run resumes
    // from would be a guess.
    ctx.addIssue({
      code: 'custom',
      path: ['incremental'],
      message: `cannot be given together with source.cursorColumn (${describeValue(source.cursorColumn)}): a job has one cursor; keep source.cursorColumn for a ${describeValue(source.type)} source and drop incremental`,
    });
  }
  if ((target === undefined) === (sink === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: target === undefined ? [] : ['sink'],
      message:
        target === undefined
          ? 'needs target (push into a worksheet) or sink (pull a worksheet out to postgres, csv or ndjson)'
          : 'must not be given together with target: a job either pushes into a worksheet (target) or pulls one out (sink)',
    });
  }
  const sourceType = isRecord(source) ? source.type : undefined;
  if (isRecord(target) && target.mode === 'two-way') checkTwoWay(value, ctx);
  if (sourceType === 'singer') checkSinger(value, ctx);
  if (sourceType === 'postgres-cdc') checkCdc(value, ctx);
  if (sourceType === 'postgres' && isRecord(source) && source.origin !== undefined && !isTwoWay(target))
    ctx.addIssue({
      code: 'custom',
      path: ['source', 'origin'],
      message:
        'is for mode two-way: it marks the writes a two-way job makes to the table, which a postgres-cdc job with the same origin drops',
    });
  const trigger = value.trigger;
  if (isRecord(trigger) && trigger.webhook !== undefined && trigger.webhook !== false && sink !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['trigger', 'webhook'],
      message: 'needs a push job (target): a hook names rows to write into a worksheet, a pull job has none',
    });
  }
  const knownType = SOURCE_TYPES.some((type) => type === sourceType);
  if (sink !== undefined && knownType && sourceType !== 'worksheet') {
    ctx.addIssue({
      code: 'custom',
      path: ['source', 'type'],
      message: `must be worksheet when the job has a sink (a pull job reads a worksheet); got ${describeValue(sourceType)}`,
    });
  }
  if (!isRecord(fields)) return;
  const mapped = Object.keys(fields);
  const key = isRecord(target) ? target.key : isRecord(sink) ? sink.key : undefined;
  const parts = Array.isArray(key) ? (key as unknown[]) : [key];
  parts.forEach((part, i) => {
    if (typeof part !== 'string' || part === '' || mapped.length === 0 || mapped.includes(part)) return;
    ctx.addIssue({
      code: 'custom',
      path: [isRecord(target) ? 'target' : 'sink', 'key', ...(Array.isArray(key) ? [i] : [])],
      message: `must be one of the mapped fields (${mapped.join(', ')}), so every row has a key to match on; got ${describeValue(part)}`,
    });
  });
}

/** Change capture writes each change by key, and streams: no cursor, no mirror sweep. */
function checkCdc(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const { target, incremental } = value;
  if (isRecord(target) && target.mode !== 'upsert' && target.mode !== 'update') {
    ctx.addIssue({
      code: 'custom',
      path: ['target', 'mode'],
      message: `must be upsert or update for a postgres-cdc source (each change is written by key; deletes: true deletes); got ${describeValue(target.mode)}`,
    });
  }
  if (incremental !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['incremental'],
      message: 'cannot be used with a postgres-cdc source: the replication slot keeps the position',
    });
  }
}

/**
 * A singer job writes what a tap sends, in chunks between its STATEs: no chunk holds the
 * whole source (so no mirror deletes), the tap's STATE is the bookmark (no cursor of
 * ours), and only `rowbridge singer` has the tap's output (no schedule, no hook).
 */
function checkSinger(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const { target, incremental, schedule, trigger } = value;
  const refuse = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (isRecord(target) && (target.mode === 'mirror' || target.mode === 'two-way'))
    refuse(
      ['target', 'mode'],
      `must be append, upsert or update with a singer source (a tap's output arrives in chunks, none of them the whole source); got ${describeValue(target.mode)}`,
    );
  if (incremental !== undefined)
    refuse(['incremental'], "cannot be used with a singer source: the tap's STATE is its bookmark");
  if (schedule !== undefined)
    refuse(['schedule'], 'cannot be used with a singer source: run it as `tap | rowbridge singer JOB`');
  if (isRecord(trigger) && trigger.webhook !== undefined && trigger.webhook !== false)
    refuse(
      ['trigger', 'webhook'],
      'cannot be used with a singer source: run it as `tap | rowbridge singer JOB`',
    );
}

/** Two-way needs a table with its primary key, and `newest` needs the table's update times. */
function checkTwoWay(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const { source, target, fields, incremental } = value;
  if (!isRecord(source) || !isRecord(target)) return;
  if (source.type === 'worksheet') {
    checkTwoWayWorksheetSource(source, incremental, ctx);
    return;
  }
  if (source.type !== 'postgres' && source.type !== 'mysql') {
    ctx.addIssue({
      code: 'custom',
      path: ['source', 'type'],
      message: `must be postgres, mysql or worksheet for mode two-way (a table or another worksheet, kept in step with the worksheet); got ${describeValue(source.type)}`,
    });
    return;
  }
  if (source.table === undefined || source.keyColumn === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['source', source.table === undefined ? 'table' : 'keyColumn'],
      message: 'is required for mode two-way: rowbridge writes back into a table by its primary key',
    });
  }
  if (incremental !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['incremental'],
      message: 'cannot be used with mode two-way: a two-way run reads both sides whole to see deletes',
    });
  }
  const fieldPolicies = isRecord(fields)
    ? Object.values(fields).map((f) => (isRecord(f) ? f.conflict : undefined))
    : [];
  const newest = (target.conflict ?? 'newest') === 'newest' || fieldPolicies.includes('newest');
  if (newest && source.updatedAtColumn === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['source', 'updatedAtColumn'],
      message:
        'is required for conflict: newest (the default of mode two-way): name the column holding when a row last changed, or choose conflict: source | worksheet | manual',
    });
  }
}

function isTwoWay(target: unknown): boolean {
  return isRecord(target) && target.mode === 'two-way';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
