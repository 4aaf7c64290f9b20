import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { WorksheetStructure } from '../../api/types.ts';
import { compilePlan, planJob } from './plan-job.ts';
import type { PreparedJob } from './plan-job.ts';
import { parseJobSpec } from '../job-spec/load-job-spec.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { StructureSnapshot } from './schema-drift.ts';
import { maskSpecText, restoreSpecText } from './snapshot-credentials.ts';
import type { RunSnapshots } from '../state/run-snapshots.ts';

/** What preparing a run needs from whoever composes it. */
export interface PrepareRunDeps {
  /** Reads `jobs/NAME.yaml`: its path and text. */
  readJob(name: string): Promise<{ file: string; text: string }>;
  /** The platform client of a credentials prefix. */
  clientFor(credentialsEnvPrefix?: string): PlatformClient;
  /** Where each run keeps the job spec and structure it started with. */
  snapshots: RunSnapshots;
  /** The structure of the job's last successful run: drift from it fails the plan. */
  lastGood?: { get(job: string): Promise<StructureSnapshot | undefined> };
}

/** A run, prepared once: the spec as it started, its client, and (push jobs) the plan. */
export interface PreparedRun {
  spec: JobSpec;
  file: string;
  client: PlatformClient;
  /** Push jobs only: the worksheet structure, the compiled plan and the run's lookups. */
  prepared?: Required<PreparedJob>;
}

/**
 * The one setup of a run, for the run, chunk and batch processors (and `plan`, without a
 * run id). The first call of a run reads the job spec, fetches the structure, checks
 * drift and stores spec text and structure with the run; every later call of that run
 * (a batch on any worker, a chunk, a reader restarted after a crash) compiles the plan
 * from that snapshot with no request, so a spec edited mid-run applies to the next run.
 * Credentials written into URLs are stored masked and taken back from the job file
 * (sync/prepare/snapshot-credentials.ts).
 */
export async function prepareRun(deps: PrepareRunDeps, job: string, runId?: string): Promise<PreparedRun> {
  const stored = runId === undefined ? undefined : await deps.snapshots.get(runId);
  if (stored !== undefined) {
    const text =
      stored.masked === undefined || stored.masked.length === 0
        ? stored.text
        : restoreSpecText(
            { text: stored.text, masked: stored.masked },
            await deps.readJob(job).catch(() => undefined),
            stored.file,
          );
    const spec = parseJobSpec(text, stored.file);
    const client = deps.clientFor(spec.target?.app?.credentialsEnvPrefix);
    if (spec.target === undefined || stored.structure === undefined)
      return { spec, file: stored.file, client };
    return {
      spec,
      file: stored.file,
      client,
      prepared: compilePlan(spec, stored.structure, client, stored.file),
    };
  }
  const { file, text } = await deps.readJob(job);
  const spec = parseJobSpec(text, file);
  const client = deps.clientFor(spec.target?.app?.credentialsEnvPrefix);
  let prepared: Required<PreparedJob> | undefined;
  let structure: WorksheetStructure | undefined;
  if (spec.target !== undefined) {
    prepared = await planJob(spec, client, file, deps.lastGood);
    structure = prepared.structure;
  }
  if (runId !== undefined) {
    // A credential written into a URL is never stored: later preparations take it back from the file.
    const safe = maskSpecText(text);
    await deps.snapshots.save(runId, {
      file,
      text: safe.text,
      ...(safe.masked.length > 0 ? { masked: safe.masked } : {}),
      ...(structure ? { structure } : {}),
    });
  }
  return { spec, file, client, ...(prepared ? { prepared } : {}) };
}
