/**
 * One two-way run: read both sides whole, plan (plan-two-way.ts), then write in the
 * order that keeps it exactly-once. Before a write the run records what it intends: the
 * value it will write as each link's `pending` hashes, and an intent per record it will
 * create. A run killed at any point leaves state the next run reads correctly: a side
 * holding a pending value did not edit it, and a created record that was never linked is
 * found again by its key (matching by key comes before any create, which is also how a
 * lost link table is rebuilt). Links and hashes are saved only after the write they
 * describe is confirmed (a table batch after its COMMIT).
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { createZoneClock } from '../../api/zone-clock.ts';
import type { Logger } from '../../ground/logger.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { PreparedJob } from '../prepare/plan-job.ts';
import type { RedisClient } from '../state/redis-types.ts';
import { createLinkStore } from './link-store.ts';
import type { Conflict, Intent } from './link-store.ts';
import { commitConflicts } from './conflict-cas.ts';
import { planTwoWay } from './plan-two-way.ts';
import { summarizePlan } from './plan-summary.ts';
import type { TwoWayPlanSummary } from './plan-summary.ts';
import type { TwoWayPlan } from './two-way-plan-types.ts';
import { openOtherSide } from './open-other-side.ts';
import type { TableSide } from './table-side-types.ts';
import { twoWayFields } from './two-way-fields.ts';
import type { TwoWayField } from './two-way-fields.ts';
import { readTwoWay } from './two-way-read.ts';
import { createRecordMaker } from './side-record.ts';
import { createRefusedRecords, mappingRefusal } from './refused-records.ts';
import type { RejectedRecord } from './refused-records.ts';
import { createWorksheetSide, isRefusal } from './worksheet-side.ts';
import { createTwoWayRows, relationKeyFields, relationRefs } from './two-way-rows.ts';

/** What a run wrote on each side and what it left for a person. */
export interface TwoWayReport {
  counts: TwoWayPlan['counts'];
  read: { source: number; worksheet: number };
  /** `whole`: both sides read whole; `changes`: keys, and what changed since the last run (read-sides.ts). */
  reads: 'whole' | 'changes';
  /** Records read whole on each side; the rest were linked and unchanged on both. */
  readWhole: { source: number; worksheet: number };
  worksheet: { created: number; updated: number; deleted: number };
  source: { created: number; updated: number; deleted: number };
  conflicts: number;
  heldDeletes: number;
  kept: TwoWayPlan['kept'];
  /** Records a side refused (an option the worksheet lacks, a value the platform refused...), with the reasons. */
  rejected: RejectedRecord[];
  /** Planned only (`plan`): the writes the run would make and their API cost. */
  planned?: TwoWayPlanSummary;
}

export interface TwoWayDeps {
  spec: JobSpec;
  file: string;
  client: PlatformClient;
  prepared: Required<PreparedJob>;
  redis: RedisClient;
  prefix: string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** The platform client of a credentials prefix: a worksheet source's (open-other-side.ts). */
  clientFor?: (credentialsEnvPrefix?: string) => PlatformClient;
  /** Test hook: called at each phase, so a test can stop the process there. */
  onPhase?: (phase: 'read' | 'planned' | 'write-worksheet' | 'write-source') => Promise<void> | void;
}

/** Rows per table transaction. */
const TABLE_BATCH = 500;

/** Runs the job once; `planOnly` reads and plans and writes nothing. */
export async function runTwoWay(deps: TwoWayDeps, planOnly = false): Promise<TwoWayReport> {
  const { spec, prepared } = deps;
  const target = spec.target!;
  const store = createLinkStore({ redis: deps.redis, prefix: deps.prefix, job: spec.name });
  await store.checkFormat({ readOnly: planOnly });
  const { side: table, updatedAtColumn } = await openOtherSide(spec, deps.file, deps.env, deps.clientFor);
  try {
    const generated = new Set([...table.columns].filter(([, c]) => c.generated).map(([name]) => name));
    const fields = twoWayFields(spec, prepared.structure, generated, deps.file);
    const keyTargets = [target.key!].flat();
    const worksheetSide = createWorksheetSide(
      deps.client,
      target.worksheet,
      prepared.plan,
      prepared.lookups,
      target.triggerWorkflow,
    );
    const orgClock = createZoneClock(deps.client.organisation.timeZone);
    const updatedClock = createZoneClock(spec.options.timezone ?? 'UTC');
    const record = createRecordMaker({ spec, fields, keyTargets, orgClock });

    await deps.onPhase?.('read');
    const relations = relationKeyFields(prepared.structure, relationRefs(spec), deps.file);
    const worksheetRows = createTwoWayRows(deps.client, prepared.structure, relations);
    const read = await readTwoWay({
      ...deps,
      store,
      table,
      fields,
      keyTargets,
      updatedAtColumn,
      updatedClock,
      record,
      worksheetRows,
    });
    const { intents, conflicts, pendingDeletes } = read;
    const { source: sourceRecords, worksheet: worksheetRecords } = read.sides;
    const plan = planTwoWay({
      fields,
      columns: table.columns,
      source: sourceRecords,
      worksheet: worksheetRecords,
      links: read.sides.links,
      quiet: read.sides.quiet,
      intents,
      conflicts,
      pendingDeletes,
      deletes: target.deletes ?? 'both',
      deleteThreshold: spec.options.deleteThreshold,
      now: new Date().toISOString(),
    });
    const report: TwoWayReport = {
      counts: plan.counts,
      read: { source: sourceRecords.length, worksheet: worksheetRecords.length },
      reads: read.sides.reads,
      readWhole: read.sides.readWhole,
      worksheet: { created: 0, updated: 0, deleted: 0 },
      source: { created: 0, updated: 0, deleted: 0 },
      conflicts: plan.raiseConflicts.length,
      heldDeletes:
        plan.holdDeletes.length +
        [...pendingDeletes.keys()].filter((id) => !plan.forgetDeletes.includes(id)).length,
      kept: plan.kept,
      rejected: [],
    };
    if (planOnly) {
      const otherRows = spec.source.type === 'worksheet' ? sourceRecords.length : undefined;
      const reads = { worksheet: worksheetRows.requests, sourceWorksheetRows: otherRows, fields, relations };
      return { ...report, planned: summarizePlan(plan, reads) };
    }
    await deps.onPhase?.('planned');
    const recheck = await apply(plan, report, {
      store,
      table,
      worksheetSide,
      fields,
      deps,
      intents: [...intents.values()],
      conflicts,
      matchKeys: { source: sourceRecords, worksheet: worksheetRecords },
    });
    await read.commit(plan, recheck);
    return report;
  } finally {
    await table.close();
  }
}

interface ApplyDeps {
  store: ReturnType<typeof createLinkStore>;
  table: TableSide;
  worksheetSide: ReturnType<typeof createWorksheetSide>;
  fields: readonly TwoWayField[];
  deps: TwoWayDeps;
  intents: Intent[];
  /** The conflicts as read: saved or dropped only where still so (conflict-cas.ts). */
  conflicts: ReadonlyMap<string, Conflict>;
  /** Both sides as read: a refused record is named by its match key. */
  matchKeys: Parameters<typeof createRefusedRecords>[1];
}

/** Writes the plan; answers the table keys of the records a side refused. */
async function apply(plan: TwoWayPlan, report: TwoWayReport, a: ApplyDeps): Promise<string[]> {
  const { store, table, worksheetSide } = a;
  const refused = createRefusedRecords(a.deps.spec, a.matchKeys, report.rejected);
  const job = { redis: a.deps.redis, prefix: a.deps.prefix, job: a.deps.spec.name };
  await commitConflicts(job, a.conflicts, plan.raiseConflicts, []);
  await store.savePendingDeletes(plan.holdDeletes);
  await store.saveLinks(plan.settle);
  // Intent first: what each link will hold, and each record about to be created.
  await store.saveLinks(plan.writes.map((w) => ({ ...w.link, pending: w.next.base })));
  const creates = await worksheetSide.map(
    plan.createInWorksheet.map((c) => ({ ref: c.record.id, record: c.record.values })),
  );
  for (const r of creates.rejected) refused.add('worksheet', r.write.ref, mappingRefusal(r.errors));
  const createBase = new Map(plan.createInWorksheet.map((c) => [c.record.id, c]));
  await store.saveIntents([
    ...creates.ok.map(({ write }) => ({
      side: 'worksheet' as const,
      origin: write.ref,
      matchKey: createBase.get(write.ref)!.record.matchKey,
      base: createBase.get(write.ref)!.base,
      ...lastOf(createBase.get(write.ref)!),
    })),
    ...plan.createInSource.map((c) => ({
      side: 'source' as const,
      origin: c.record.id,
      matchKey: c.record.matchKey,
      base: c.base,
      ...lastOf(c),
    })),
  ]);

  await a.deps.onPhase?.('write-worksheet');
  const failed = new Set<string>();
  const updates = await worksheetSide.map(
    plan.writes
      .filter((w) => w.toWorksheet.length > 0)
      .map((w) => ({
        ref: w.link.key,
        rowId: w.link.rowId,
        record: w.worksheetRecord,
        targets: w.toWorksheet,
      })),
  );
  for (const r of updates.rejected) {
    failed.add(r.write.ref);
    refused.add('worksheet', r.write.ref, mappingRefusal(r.errors));
  }
  for (const u of updates.ok) {
    const no = await worksheetSide.update(u.write.rowId!, u.fields);
    // Refused: its link keeps the pending value, so the next run writes it again.
    if (no !== undefined) {
      failed.add(u.write.ref);
      refused.add('worksheet', u.write.ref, no);
    } else report.worksheet.updated++;
  }
  for (let i = 0; i < creates.ok.length; i += 100) {
    const part = creates.ok.slice(i, i + 100);
    const ids = await worksheetSide.create(part.map((p) => ({ fields: p.fields })));
    // A refused create stays unlinked: the next run plans it again.
    const made = part.flatMap((p, j) => {
      const id = ids[j]!;
      if (!isRefusal(id)) return [{ ref: p.write.ref, rowId: id }];
      refused.add('worksheet', p.write.ref, id);
      return [];
    });
    await store.saveLinks(
      made.map((m) => ({ key: m.ref, rowId: m.rowId, ...baseOf(createBase.get(m.ref)!) })),
    );
    await store.dropIntents(made.map((m) => ({ side: 'worksheet', origin: m.ref })));
    report.worksheet.created += made.length;
  }
  if (plan.deleteInWorksheet.length > 0) {
    await worksheetSide.remove(plan.deleteInWorksheet.map((l) => l.rowId));
    await store.dropLinks(plan.deleteInWorksheet);
    report.worksheet.deleted += plan.deleteInWorksheet.length;
  }

  await a.deps.onPhase?.('write-source');
  const sourceUpdates = plan.writes.filter((w) => Object.keys(w.toSource).length > 0);
  const total = Math.max(sourceUpdates.length, plan.createInSource.length, plan.deleteInSource.length);
  for (let i = 0; i < total; i += TABLE_BATCH) {
    const ups = sourceUpdates.slice(i, i + TABLE_BATCH);
    const ins = plan.createInSource.slice(i, i + TABLE_BATCH);
    const dels = plan.deleteInSource.slice(i, i + TABLE_BATCH);
    const written = await table.write({
      updates: ups.map((w) => ({ key: w.link.key, set: w.toSource })),
      inserts: ins.map((c) => ({ ref: c.record.id, values: c.values })),
      deletes: dels.map((l) => l.key),
    });
    // A refused record is left out and the batch's others written (a table: under a savepoint).
    const no = new Set(written.refused.map((r) => r.ref));
    const made = ins.filter((c) => !no.has(c.record.id));
    for (const { ref, ...why } of written.refused) {
      const created = ins.some((c) => c.record.id === ref);
      if (!created) failed.add(ref);
      refused.add('source', ref, why, created ? 'source' : undefined);
    }
    // Committed: now the links may say so.
    await store.saveLinks(
      made.map((c) => ({ key: written.created.get(c.record.id)!, rowId: c.record.id, ...baseOf(c) })),
    );
    await store.dropIntents(made.map((c) => ({ side: 'source', origin: c.record.id })));
    const gone = dels.filter((l) => !no.has(l.key)); // a refused delete keeps its link
    await store.dropLinks(gone);
    report.source.updated += ups.filter((w) => !no.has(w.link.key)).length;
    report.source.created += made.length;
    report.source.deleted += gone.length;
  }

  await store.saveLinks(plan.writes.filter((w) => !failed.has(w.link.key)).map((w) => w.next));
  await store.dropLinks(plan.dropLinks);
  // Every intent of an earlier run was matched by key this run, or its record is gone.
  await store.dropIntents(a.intents);
  await commitConflicts(job, a.conflicts, [], plan.clearConflicts);
  await store.dropPendingDeletes(plan.forgetDeletes);
  return refused.tableKeys();
}

function lastOf(c: { last?: Record<string, string> }): { last?: Record<string, string> } {
  return c.last === undefined ? {} : { last: c.last };
}

function baseOf(c: { base: Record<string, string>; last?: Record<string, string> }) {
  return { base: c.base, ...lastOf(c) };
}
