/**
 * How every end of a run job closes: its traffic counted, the job's run slot released,
 * row bookkeeping dropped or kept, the outcome logged and notified. One file, so that a
 * run failing in any step ends exactly like one that completed.
 */
import type { Logger } from '../ground/logger.ts';
import type { RunRecord, RunStore } from '../sync/state/run-store.ts';
import type { RunScope } from './run-scope.ts';

/** The ends of one run job. */
export interface RunFinish {
  /** Adds this process's requests for the run to its report, once. */
  flushTraffic: () => Promise<void>;
  /**
   * Releases the job. A completed run drops its row bookkeeping; any other end keeps
   * it (with an expiry) and names the run as the job's resumable one.
   */
  finish: () => Promise<RunRecord | undefined>;
}

/** What finishing needs: the run store, and the notifier of the run's outcome. */
export interface RunFinishDeps {
  runs: RunStore;
  notify(job: string, runId: string): Promise<unknown>;
}

/** The ends of the run job in `scope`. */
export function createRunFinish(deps: RunFinishDeps, scope: Omit<RunScope, 'signal'>): RunFinish {
  const { runs } = deps;
  const { job, runId, log, traffic } = scope;
  return { flushTraffic, finish };

  async function flushTraffic(): Promise<void> {
    if (traffic.requests + traffic.retries === 0) return;
    const counted = { ...traffic };
    Object.assign(traffic, { requests: 0, throttled: 0, retries: 0 });
    await runs.addTraffic(runId, counted);
  }

  async function finish(): Promise<RunRecord | undefined> {
    await flushTraffic();
    await runs.releaseJob(job.data.job, runId);
    const final = await runs.get(runId);
    // A run short of its expectations wrote every row all the same: its state goes too.
    if (final?.status === 'completed' || final?.status === 'unmet') {
      await runs.dropRowState(runId);
      // The job is whole again: an older failed run of it is no longer to be resumed.
      const stale = await runs.takeResumable(job.data.job);
      if (stale !== undefined && stale !== runId) await runs.dropRowState(stale);
    }
    logFinished(log, final, await runs.report(runId));
    // A notifier that fails never fails the run: it shows in the notify queue and the log.
    await deps
      .notify(job.data.job, runId)
      .catch((err: unknown) =>
        log.warn({ err: { message: (err as Error).message } }, 'notifications of the run not queued'),
      );
    return final;
  }
}

function logFinished(log: Logger, final: RunRecord | undefined, report: unknown): void {
  const level = final?.status === 'completed' ? 'info' : 'error';
  log[level]({ status: final?.status, message: final?.message, report }, 'run finished');
}
