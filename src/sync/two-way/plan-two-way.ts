/**
 * What a two-way run will do, decided from both sides' records and the job's state
 * without any write: links kept, records matched by key, fields merged, creates,
 * deletes (or held back), conflicts. Pure: `plan` shows it, the run carries it out.
 */
import { decideField } from './merge-field.ts';
import type { FieldDecision } from './merge-field.ts';
import type { Link } from './link-store.ts';
import { pendingDeleteId } from './link-store.ts';
import { comparable, lastSynced, toColumnValue, valueHash } from './two-way-fields.ts';
import type { TwoWayField } from './two-way-fields.ts';
import type { SideRecord, TwoWayInput, TwoWayPlan } from './two-way-plan-types.ts';

/** Decides a whole run. */
export function planTwoWay(input: TwoWayInput): TwoWayPlan {
  const { fields } = input;
  const plan: TwoWayPlan = {
    counts: { matched: 0, sourceOnly: 0, worksheetOnly: 0, ambiguous: 0, linked: input.quiet?.links ?? 0 },
    settle: [],
    writes: [],
    createInWorksheet: [],
    createInSource: [],
    deleteInWorksheet: [],
    deleteInSource: [],
    dropLinks: [],
    holdDeletes: [],
    forgetDeletes: [],
    raiseConflicts: [],
    clearConflicts: [],
    kept: [],
  };
  const source = new Map(input.source.map((r) => [r.id, r]));
  const worksheet = new Map(input.worksheet.map((r) => [r.id, r]));
  const raised = new Set<string>();
  const linkedSource = new Set<string>();
  const linkedRows = new Set<string>();
  const unlinkedSource: SideRecord[] = [];
  const unlinkedRows: SideRecord[] = [];
  const plannedDeletes: Array<{ link: Link; side: 'source' | 'worksheet' }> = [];

  const edited = (link: Link, record: SideRecord) =>
    fields.some((f) => {
      const h = record.hashes[f.target];
      return h !== link.base[f.target] && h !== link.pending?.[f.target];
    });

  for (const link of input.links.values()) {
    const s = source.get(link.key);
    const w = worksheet.get(link.rowId);
    if (link.gone !== undefined) {
      if (s !== undefined) linkedSource.add(s.id);
      if (w !== undefined) linkedRows.add(w.id);
      continue;
    }
    if (s !== undefined && w !== undefined) {
      linkedSource.add(s.id);
      linkedRows.add(w.id);
      plan.counts.linked++;
      merge(link, s, w);
    } else if (s === undefined && w === undefined) {
      plan.dropLinks.push(link);
    } else if (input.deletes === 'none') {
      if (s !== undefined) linkedSource.add(s.id);
      if (w !== undefined) linkedRows.add(w.id);
      plan.settle.push({ ...link, gone: s === undefined ? 'source' : 'worksheet' });
    } else if (s === undefined) {
      // Deleted in the table. Edited in the worksheet since: kept, and created in the table again.
      if (edited(link, w!)) {
        plan.kept.push({ deletedOn: 'source', key: link.key, rowId: link.rowId });
        plan.dropLinks.push(link);
        unlinkedRows.push(w!);
      } else {
        linkedRows.add(w!.id);
        plannedDeletes.push({ link, side: 'worksheet' });
      }
    } else if (edited(link, s)) {
      plan.kept.push({ deletedOn: 'worksheet', key: link.key, rowId: link.rowId });
      plan.dropLinks.push(link);
      unlinkedSource.push(s);
    } else {
      linkedSource.add(s.id);
      plannedDeletes.push({ link, side: 'source' });
    }
  }
  const kept = new Set(plan.kept.map((k) => (k.deletedOn === 'source' ? `w:${k.rowId}` : `s:${k.key}`)));
  for (const s of input.source) if (!linkedSource.has(s.id) && !kept.has(`s:${s.id}`)) unlinkedSource.push(s);
  for (const w of input.worksheet) if (!linkedRows.has(w.id) && !kept.has(`w:${w.id}`)) unlinkedRows.push(w);

  matchUnlinked();
  holdOrDelete();
  for (const id of input.conflicts.keys()) if (!raised.has(id)) plan.clearConflicts.push(id);
  return plan;

  function merge(link: Link, s: SideRecord, w: SideRecord): void {
    const conflictId = `fields:${link.key}`;
    const resolution = input.conflicts.get(conflictId)?.take;
    const decisions = new Map<TwoWayField, FieldDecision>();
    const resolvedFields = new Set<TwoWayField>();
    for (const f of fields) {
      const base = { base: link.base[f.target], pending: link.pending?.[f.target] };
      let d = decideField(base, w.hashes[f.target]!, s.hashes[f.target]!, f, {
        worksheet: w.updatedAt,
        source: s.updatedAt,
      });
      if (d.kind === 'conflict' && resolution !== undefined) {
        resolvedFields.add(f);
        d =
          'source' in resolution
            ? { kind: 'to-worksheet', why: 'policy' }
            : { kind: 'to-source', why: 'policy' };
      }
      decisions.set(f, d);
    }
    const conflicting = fields.filter((f) => decisions.get(f)!.kind === 'conflict');
    if (conflicting.length > 0) {
      raised.add(conflictId);
      plan.raiseConflicts.push({
        id: conflictId,
        kind: 'fields',
        matchKey: s.matchKey,
        key: link.key,
        rowId: link.rowId,
        fields: conflicting.map((f) => ({
          field: f.target,
          worksheet: w.comparable[f.target]!,
          source: s.comparable[f.target]!,
          ...(link.base[f.target] === undefined ? {} : { base: link.base[f.target] }),
          ...(link.last?.[f.target] === undefined ? {} : { last: link.last[f.target] }),
        })),
        ...(w.updatedAt === undefined ? {} : { worksheetUpdatedAt: new Date(w.updatedAt).toISOString() }),
        ...(s.updatedAt === undefined ? {} : { sourceUpdatedAt: new Date(s.updatedAt).toISOString() }),
        at: input.conflicts.get(conflictId)?.at ?? input.now,
      });
      return;
    }
    const value = resolution !== undefined && 'value' in resolution ? resolution.value : undefined;
    const next: Link = { key: link.key, rowId: link.rowId, base: {} };
    const toWorksheet: string[] = [];
    const toSource: Record<string, unknown> = {};
    const worksheetRecord: Record<string, unknown> = { ...s.values };
    const synced: Record<string, string> = { ...s.comparable };
    for (const f of fields) {
      const d = decisions.get(f)!;
      const resolved = value !== undefined && resolvedFields.has(f);
      if (resolved && f.column !== undefined) {
        const c = comparable(f.type, value, f.sourceZone);
        worksheetRecord[f.column] = value;
        toWorksheet.push(f.target);
        toSource[f.column] = toColumnValue(f, c, input.columns.get(f.column));
        next.base[f.target] = valueHash(c);
        synced[f.target] = c;
      } else if (d.kind === 'to-worksheet') {
        toWorksheet.push(f.target);
        next.base[f.target] = s.hashes[f.target]!;
      } else if (d.kind === 'to-source') {
        toSource[f.column!] = toColumnValue(f, w.comparable[f.target]!, input.columns.get(f.column!));
        next.base[f.target] = w.hashes[f.target]!;
        synced[f.target] = w.comparable[f.target]!;
      } else next.base[f.target] = s.hashes[f.target]!;
    }
    const last = lastSynced(fields, synced);
    if (last !== undefined) next.last = last;
    if (toWorksheet.length > 0 || Object.keys(toSource).length > 0)
      plan.writes.push({ link, next, toWorksheet, worksheetRecord, toSource });
    else if (
      link.pending !== undefined ||
      fields.some(
        (f) => link.base[f.target] !== next.base[f.target] || link.last?.[f.target] !== last?.[f.target],
      )
    )
      plan.settle.push(next);
  }

  function matchUnlinked(): void {
    // Records read whole only: no quiet record shares a key with an unlinked one (TwoWayInput.quiet).
    const bySource = idsByKey(input.source);
    const byRow = idsByKey(input.worksheet);
    const intentOf = (side: 'source' | 'worksheet', origin: string) => input.intents.get(`${side}:${origin}`);
    const ambiguous = (k: string) => {
      const id = `ambiguous:${k}`;
      if (raised.has(id)) return;
      raised.add(id);
      plan.counts.ambiguous++;
      plan.raiseConflicts.push({
        id,
        kind: 'ambiguous',
        matchKey: k,
        records: {
          source: bySource(k),
          worksheet: byRow(k),
        },
        at: input.conflicts.get(id)?.at ?? input.now,
      });
    };
    const isAmbiguous = (k: string) => k === '' || bySource(k).length > 1 || byRow(k).length > 1;
    const unlinkedRowIds = new Set(unlinkedRows.map((r) => r.id));
    const paired = new Set<string>();
    for (const s of unlinkedSource) {
      const k = s.matchKey;
      if (isAmbiguous(k)) {
        ambiguous(k === '' ? `(empty) source ${s.id}` : k);
        continue;
      }
      const match = byRow(k)[0];
      const w = match === undefined ? undefined : worksheet.get(match);
      if (match === undefined) {
        plan.counts.sourceOnly++;
        plan.createInWorksheet.push({ record: s, base: { ...s.hashes }, ...lastOf(s) });
      } else if (w === undefined || !unlinkedRowIds.has(w.id)) {
        ambiguous(k);
      } else {
        paired.add(w.id);
        plan.counts.matched++;
        const intent = intentOf('worksheet', s.id) ?? intentOf('source', w.id);
        const link: Link = { key: s.id, rowId: w.id, base: intent?.base ?? {} };
        if (intent?.last !== undefined) link.last = intent.last;
        merge(link, s, w);
        if (!plan.writes.some((x) => x.link.key === s.id) && !plan.settle.some((x) => x.key === s.id)) {
          // Matched with a conflict: linked all the same, without a base.
          plan.settle.push(link);
        }
      }
    }
    for (const w of unlinkedRows) {
      if (paired.has(w.id)) continue;
      const k = w.matchKey;
      if (isAmbiguous(k)) {
        ambiguous(k === '' ? `(empty) row ${w.id}` : k);
        continue;
      }
      if (bySource(k).length > 0) {
        ambiguous(k);
        continue;
      }
      plan.counts.worksheetOnly++;
      const values: Record<string, unknown> = {};
      for (const f of fields) {
        if (f.column === undefined || f.direction === 'to-worksheet') continue;
        values[f.column] = toColumnValue(f, w.comparable[f.target]!, input.columns.get(f.column));
      }
      plan.createInSource.push({ record: w, base: { ...w.hashes }, ...lastOf(w), values });
    }
  }

  function lastOf(record: SideRecord): { last?: Record<string, string> } {
    const last = lastSynced(fields, record.comparable);
    return last === undefined ? {} : { last };
  }

  function holdOrDelete(): void {
    const done = new Set<string>();
    for (const side of ['worksheet', 'source'] as const) {
      const planned = plannedDeletes.filter((d) => d.side === side);
      const total =
        (side === 'worksheet' ? input.worksheet.length : input.source.length) +
        (input.quiet?.[side].count ?? 0);
      const approved = planned.filter((d) => input.pendingDeletes.get(idOf(d))?.approved === true);
      const rest = planned.filter((d) => input.pendingDeletes.get(idOf(d))?.approved !== true);
      const hold = rest.length > input.deleteThreshold * total;
      for (const d of hold ? approved : planned) {
        (side === 'worksheet' ? plan.deleteInWorksheet : plan.deleteInSource).push(d.link);
        done.add(idOf(d));
      }
      if (hold)
        for (const d of rest) {
          const id = idOf(d);
          if (!input.pendingDeletes.has(id))
            plan.holdDeletes.push({ side, key: d.link.key, rowId: d.link.rowId, at: input.now });
          done.add(`held:${id}`);
        }
    }
    for (const id of input.pendingDeletes.keys()) if (!done.has(`held:${id}`)) plan.forgetDeletes.push(id);
  }
}

function idOf(d: { link: Link; side: 'source' | 'worksheet' }): string {
  return pendingDeleteId({ side: d.side, key: d.link.key, rowId: d.link.rowId });
}

/** The ids of `records` with a match key, in their order. '' matches nothing. */
function idsByKey(records: readonly SideRecord[]): (k: string) => string[] {
  const grouped = new Map<string, string[]>();
  for (const r of records) {
    if (r.matchKey === '') continue;
    const list = grouped.get(r.matchKey);
    if (list === undefined) grouped.set(r.matchKey, [r.id]);
    else list.push(r.id);
  }
  return (k) => (k === '' ? [] : (grouped.get(k) ?? []));
}
