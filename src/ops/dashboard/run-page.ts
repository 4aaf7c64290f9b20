import type { ErrorCategory } from '../../ground/errors.ts';
import type { DeadLetterEntry } from '../../sync/state/dead-letter-entry.ts';
import type { RunRecord, RunReport } from '../../sync/state/run-store.ts';
import { deadLetterTable } from './dead-letter-table.ts';
import { badge, formatDuration, formatTime, href, html, layout } from './html.ts';
import { nextStepBox } from './next-step.ts';
import { isActive } from './runs-page.ts';
import type { HtmlValue, SafeHtml } from './html.ts';

/** What the run page shows: the record, its report, and a page of its dead letters. */
export interface RunPageData {
  record: RunRecord;
  report: RunReport;
  counts: Partial<Record<ErrorCategory, number>>;
  deadLetters: readonly DeadLetterEntry[];
  /** Cursor of the next page of dead letters, when there is one. */
  next?: string | undefined;
  /** The run is the one `rowbridge run JOB` resumes. */
  resumable?: boolean;
  /** Show the Cancel buttons (a writable dashboard). */
  allowWrites?: boolean;
}

/**
 * Cancel, as `rowbridge cancel`: a running run can be stopped and kept resumable, or
 * given up; a stopped one that would be resumed can still be given up.
 */
function cancelButtons(data: RunPageData): SafeHtml {
  if (data.allowWrites !== true) return html``;
  const base = `/runs/${encodeURIComponent(data.record.runId)}`;
  const active = isActive(data.record);
  if (!active && data.resumable !== true) return html``;
  return html`<div class="actions">
      ${
        active
          ? html`<button
              type="button"
              data-action="${base}/cancel"
              data-reload="true"
              data-pending="Cancelling…"
            >
              Cancel (keep resumable)
            </button>`
          : ''
      }
      <button type="button" data-action="${base}/abandon" data-reload="true" data-pending="Abandoning…">
        ${active ? 'Cancel and abandon' : 'Abandon (no resume)'}
      </button>
    </div>
    <p id="action-status" role="status"></p>`;
}

function item(label: string, value: HtmlValue): SafeHtml {
  return value === undefined || value === ''
    ? html``
    : html`<dt>${label}</dt>
        <dd>${value}</dd>`;
}

/** `/runs/:id`: the run report (the same counts as `rowbridge status RUN`) and the run's dead letters. */
export function renderRunPage(data: RunPageData): SafeHtml {
  const { record, report, counts } = data;
  const runPath = `/runs/${encodeURIComponent(record.runId)}`;
  const reportRows: Array<[string, HtmlValue]> = [
    ['Read', report.read],
    ['Created', report.created],
    ['Updated', report.updated],
    ['Unchanged', report.unchanged],
    ['Skipped', report.skipped],
    ['Deleted', report.deleted],
    ['Dead-lettered', report.deadLetteredTotal],
    ['Requests', report.requests],
    ['Throttled', report.throttled],
    ['Retries', report.retries],
    ['Batches', report.batches],
    ['Duration', formatDuration(report.durationMs)],
  ];
  const categories = Object.entries(counts).map(
    ([category, n]) =>
      html`<a href="${href('/dead-letters', { run: record.runId, category })}">${category}: ${n}</a>`,
  );
  const body = html`<h1>Run <code>${record.runId}</code> ${badge(record.status)}</h1>
    ${record.message === undefined ? '' : html`<p class="reason"><strong>${record.message}</strong></p>`}
    ${nextStepBox(record, report, { resumable: data.resumable === true })} ${cancelButtons(data)}
    <dl>
      ${item('Job', html`<a href="/jobs/${encodeURIComponent(record.job)}">${record.job}</a>`)}
      ${item('Trigger', record.trigger)} ${item('Mode', record.mode)} ${item('Worksheet', record.worksheet)}
      ${item('Range', record.range)} ${item('Replay of', record.replay)}
      ${item('Queued', formatTime(record.createdAt))} ${item('Started', formatTime(record.startedAt))}
      ${item('Finished', formatTime(record.finishedAt))}
    </dl>
    <h2>Report</h2>
    <table class="report">
      <tbody>
        ${reportRows.map(
          ([label, value]) =>
            html`<tr>
              <th>${label}</th>
              <td class="n">${value}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h2 id="dead-letters">Dead letters</h2>
    ${categories.length === 0 ? '' : html`<p class="counts">${categories}</p>`}
    ${deadLetterTable(data.deadLetters, { showRun: false })}
    ${data.next === undefined ? '' : html`<p><a href="${href(runPath, { cursor: data.next })}#dead-letters">Next page</a></p>`}`;
  return layout(`Run ${record.runId}`, body, { live: isActive(record) });
}
