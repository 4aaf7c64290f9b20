/**
 * A two-way job whose other side is a worksheet (`source: { type: worksheet }`, another
 * app through `credentialsEnvPrefix`): the run reads it whole, as it does a table, and
 * writes it by row id, so what would hide rows (a view, a filter, a field list) or change
 * the values' form (`values: raw`) is refused. Its `_updatedAt` is the record's update
 * time, so `conflict: newest` needs no column.
 */
import type { z } from 'zod';

/** Adds an issue for each part of a worksheet source a two-way run cannot use. */
export function checkTwoWayWorksheetSource(
  source: Record<string, unknown>,
  incremental: unknown,
  ctx: z.RefinementCtx,
): void {
  const refuse = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  for (const key of ['view', 'filter', 'fields'] as const)
    if (source[key] !== undefined)
      refuse(
        ['source', key],
        'cannot be used with mode two-way: a row the run does not read would be taken for a deleted one',
      );
  if (source.values !== undefined && source.values !== 'person')
    refuse(
      ['source', 'values'],
      'must be person (the default) with mode two-way: values are compared as a person reads them',
    );
  if (incremental !== undefined)
    refuse(
      ['incremental'],
      'cannot be used with mode two-way: a two-way run reads both sides whole to see deletes',
    );
}
