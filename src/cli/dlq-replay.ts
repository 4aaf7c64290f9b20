import { formatReport, runExitCode } from './format-report.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { localQueuePrefix } from './local-run.ts';
import { withRuntime } from './open-runtime.ts';
import { workRunsInProcess } from './work-run.ts';
import type { DeadLetterFilter } from '../sync/state/dead-letter-store.ts';
import { enqueueRun } from '../queue/enqueue-run.ts';
import type { Runtime } from '../queue/runtime-types.ts';

/**
 * `dlq replay`: the selected dead letters are re-mapped with each job's current spec
 * (this process's jobs folder) and written again, one replay run per job, worked in
 * this process only, in queues of its own (as `run JOB`'s). Entries whose row
 * now lands leave the store; rows that fail again are dead-lettered anew by the replay
 * run, with the new reason. Exit 0 all landed, 2 some failed again, 1 on failure.
 */
export async function replayDeadLetters(
  selection: { ids?: string[]; filter?: DeadLetterFilter },
  io: CliIo,
): Promise<number> {
  return withRuntime(io, { interactive: true }, async (rt) => {
    const byJob = new Map<string, string[]>();
    const add = (job: string, id: string) => byJob.set(job, [...(byJob.get(job) ?? []), id]);
    if (selection.ids !== undefined && selection.ids.length > 0) {
      for (const id of selection.ids) {
        const entry = await rt.deadLetters.get(id);
        if (entry === undefined) {
          io.err(`no dead letter ${id}`);
          return EXIT.failure;
        }
        const job = selection.filter?.job;
        if (job !== undefined && entry.job !== job) {
          io.err(`dead letter ${id} belongs to job ${entry.job}, not ${job}: not replayed`);
          continue;
        }
        add(entry.job, id);
      }
    } else {
      for await (const entry of rt.deadLetters.iterate(selection.filter ?? {})) add(entry.job, entry.id);
    }
    if (byJob.size === 0) {
      io.out('no dead letters match');
      return EXIT.ok;
    }
    const results: Awaited<ReturnType<typeof workRunsInProcess>> = [];
    for (const [job, ids] of byJob) {
      // In the queues of `run JOB` (./local-run.ts), which no worker listens to: in the
      // shared ones a worker would take the replay (and its batches), mapping with its own
      // version of the job, or failing without the file, and with its credentials.
      const local: Runtime = { ...rt, queuePrefix: localQueuePrefix(rt.queuePrefix, job) };
      const runId = await enqueueRun(local, job, { trigger: 'replay', replayIds: ids });
      // Workers judging the job's lock look for its queue job there.
      await local.runs.update(runId, { queues: local.queuePrefix });
      results.push(...(await workRunsInProcess(local, [runId], io, { label: `replay ${job}` })));
    }
    const codes = results.map(({ record, report }) => {
      if (record !== undefined) io.out(formatReport(record, report));
      return runExitCode(record, report);
    });
    if (codes.includes(EXIT.failure)) return EXIT.failure;
    return codes.includes(EXIT.deadLettered) ? EXIT.deadLettered : EXIT.ok;
  });
}
