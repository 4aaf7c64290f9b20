import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { WorksheetStructure } from '../../api/types.ts';
import { ConfigError } from '../../ground/errors.ts';
import { createReferenceLookups, createRowReader } from './create-reference-lookups.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { MappingPlan } from '../mapping/plan-types.ts';
import type { ReferenceLookups } from '../mapping/resolve-references.ts';
import { validateMapping } from '../mapping/validate-mapping.ts';
import { SchemaDriftError, structureDrift } from './schema-drift.ts';
import type { StructureSnapshot } from './schema-drift.ts';
import { worksheetWrittenTargets } from '../job-spec/two-way-options.ts';

/** What planJob prepares for a run; keep it for the run so lookups are shared by its batches. */
export interface PreparedJob {
  structure: WorksheetStructure;
  plan: MappingPlan;
  /** Member, department and relation lookups, each distinct value asked once while this is kept. */
  lookups?: ReferenceLookups;
}

/** Resolves the target worksheet and compiles the mapping: the checks made before any write. */
export async function planJob(
  spec: JobSpec,
  client: PlatformClient,
  file?: string,
  /** The structure of the job's last successful run: drift from it fails the plan (schema-drift.ts). */
  lastGood?: { get(job: string): Promise<StructureSnapshot | undefined> },
): Promise<Required<PreparedJob>> {
  const target = spec.target;
  if (target === undefined)
    throw new ConfigError(`job ${spec.name} has no target worksheet (it is a pull job with a sink)`);
  const structure = await client.worksheets.get(target.worksheet);
  // Drift first: "field Spend was deleted" says more than "no field spend".
  const before = await lastGood?.get(spec.name);
  if (before !== undefined) {
    const drift = structureDrift(before, structure, spec.mappings, target.mode !== 'update');
    if (drift.length > 0) {
      throw new SchemaDriftError(
        `${file ?? `job ${spec.name}`}: worksheet ${structure.name} changed since the job's last successful run; nothing was written:\n` +
          drift.map((d) => `  - ${d}`).join('\n') +
          "\n  fix the worksheet, or update the job's mapping to fit (an edited mapping counts as reviewed)",
      );
    }
  }
  return compilePlan(spec, structure, client, file);
}

/**
 * The mapping plan of `spec` against a known structure: no request. A run compiles it
 * from the structure stored with the run (prepare-run.ts), so every batch and chunk of
 * the run writes with the mapping the run started with.
 */
export function compilePlan(
  spec: JobSpec,
  structure: WorksheetStructure,
  client: PlatformClient,
  file?: string,
): Required<PreparedJob> {
  const target = spec.target;
  if (target === undefined)
    throw new ConfigError(`job ${spec.name} has no target worksheet (it is a pull job with a sink)`);
  // A two-way field marked to-source is only read from the worksheet, never written there.
  const written = target.mode === 'two-way' ? worksheetWrittenTargets(spec) : undefined;
  const own = written === undefined ? spec.mappings : spec.mappings.filter((m) => written.has(m.target));
  // options.createMissingOptions is the job-wide default of each mapping's createOptions.
  const mappings = spec.options.createMissingOptions ? own.map((m) => ({ createOptions: true, ...m })) : own;
  const plan = validateMapping(mappings, structure, {
    mode: target.mode === 'two-way' ? 'upsert' : target.mode,
    key: target.key,
    relationKeys: target.mode === 'two-way',
    jobFile: file,
    targetTimezone: client.organisation.timeZone,
  });
  const reader = createRowReader(client);
  reader.know(structure, target.worksheet);
  return { structure, plan, lookups: createReferenceLookups(client, reader) };
}
