/**
 * What the operator does next about a run, from what its record and report hold: the
 * record keeps the failure's sentence, not its category, so the cause is read from the
 * wording our own errors use (they name the file, the setting or the code), and the
 * command from whether the run is the job's resumable one. Dead letters get their own
 * step whether or not the run failed.
 */
import type { RunRecord, RunReport } from '../../sync/state/run-store.ts';
import { href, html } from './html.ts';
import type { SafeHtml } from './html.ts';

/** What decides the step besides the record and report. */
export interface NextStepContext {
  /** The run is the one `rowbridge run JOB` resumes (it holds the job's row state). */
  resumable: boolean;
}

const CAUSES: ReadonlyArray<{ test: RegExp; step: (job: string) => SafeHtml }> = [
  {
    test: /does not exist|is not a file|is not readable|source path|data folder/i,
    step: (job) =>
      html`Put the source file back where the job reads it, or fix its path in
        <code>jobs/${job}.yaml</code>.`,
  },
  {
    test: /credential|token|re-?authori[sz]e|OAUTH|\b401\b|sign in|api key/i,
    step: () => html`Renew the platform credentials named above (the <code>ROWBRIDGE_*</code> settings).`,
  },
  {
    test: /forbidden|access denied|permission|not allowed|\b403\b|\bIP\b/i,
    step: () => html`Grant the app access (permissions or IP allow-list) named above.`,
  },
  {
    test: /quota|usage limit/i,
    step: () => html`Wait for the platform's quota to renew, or raise it.`,
  },
  {
    test: /cannot reach|ECONNREFUSED|ENOTFOUND|unavailable|timed out|network/i,
    step: () => html`Make sure the source and the platform are reachable.`,
  },
  {
    test: /job spec|mapping|not in the mapping|key field|required field|environment variable|worksheet|field/i,
    step: (job) =>
      html`Fix the spec: edit <code>jobs/${job}.yaml</code> and check it with
        <code>rowbridge validate ${job}</code>.`,
  },
];

function failedSteps(record: RunRecord, context: NextStepContext): SafeHtml[] {
  const message = record.message ?? '';
  const job = record.job;
  if (message.startsWith('abandoned:'))
    return [
      html`Nothing to do: this run was given up on purpose (<code>run --fresh</code>); the run that replaced
        it is in <a href="${href('/runs', { job })}">the job's runs</a>.`,
    ];
  const cause = CAUSES.find(({ test }) => test.test(message));
  const fix = cause === undefined ? html`Fix the cause named above.` : cause.step(job);
  const again = context.resumable
    ? html`<strong>Resumable:</strong> <code>rowbridge run ${job}</code> resumes it; rows already written are
        not written again (<code>--fresh</code> starts anew).`
    : record.mode === 'pull'
      ? html`<code>rowbridge run ${job}</code> runs it again; an incremental pull reads on from its saved
          cursor.`
      : html`Re-run: <code>rowbridge run ${job}</code> starts a new run.`;
  return [fix, again];
}

/** The steps for `record`, or none when the run needs nothing (it completed clean or is going). */
export function nextSteps(record: RunRecord, report: RunReport, context: NextStepContext): SafeHtml[] {
  const steps = record.status === 'failed' ? failedSteps(record, context) : [];
  const dead = report.deadLetteredTotal;
  if (dead > 0 && (record.status === 'failed' || record.status === 'completed'))
    steps.push(
      html`Dead letters: ${dead} row${dead === 1 ? '' : 's'} not written (<a
          href="${href('/dead-letters', { run: record.runId })}"
          >see why</a
        >). Fix the mapping and replay them with <code>rowbridge dlq replay --job ${record.job}</code>, or fix
        the rows in <code>rowbridge dlq export --csv --run ${record.runId}</code> and replay the file with
        <code>rowbridge dlq replay --file FIXED.csv</code>.`,
    );
  return steps;
}

/** The next step as a box for the run page, empty when there is none. */
export function nextStepBox(record: RunRecord, report: RunReport, context: NextStepContext): SafeHtml {
  const steps = nextSteps(record, report, context);
  if (steps.length === 0) return html``;
  return html`<section class="next-step ${record.status}" aria-labelledby="next-step">
    <h2 id="next-step">Next step</h2>
    <ol>
      ${steps.map((step) => html`<li>${step}</li>`)}
    </ol>
  </section>`;
}
