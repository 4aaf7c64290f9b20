import type { RunRecord, RunReport } from '../../sync/state/run-store.ts';
import { badge, formatDuration, formatTime, href, html, layout } from './html.ts';
import type { SafeHtml } from './html.ts';

/** A run with its report, as the runs list shows it. */
export interface RunListItem {
  record: RunRecord;
  report: RunReport;
}

/** `/`: the newest runs with their counts, each linking to its report. */
export function renderRunsPage(
  items: readonly RunListItem[],
  filter: { job?: string | undefined },
): SafeHtml {
  const rows = items.map(({ record, report }) => {
    const link = href(`/runs/${encodeURIComponent(record.runId)}`);
    return html`<tr>
      <td>
        <a href="${link}"><code>${record.runId}</code></a>
      </td>
      <td><a href="${href('/', { job: record.job })}">${record.job}</a></td>
      <td>${badge(record.status)}</td>
      <td>${record.trigger ?? ''}</td>
      <td>${formatTime(record.startedAt ?? record.createdAt)}</td>
      <td class="n">${report.read}</td>
      <td class="n">${report.created}</td>
      <td class="n">${report.updated}</td>
      <td class="n">${report.unchanged}</td>
      <td class="n">${report.skipped}</td>
      <td class="n">${report.deleted}</td>
      <td class="n">
        ${report.deadLetteredTotal > 0 ? html`<a href="${link}#dead-letters">${report.deadLetteredTotal}</a>` : 0}
      </td>
      <td class="n">${report.requests}</td>
      <td class="n">${report.durationMs > 0 ? formatDuration(report.durationMs) : ''}</td>
    </tr>`;
  });
  const heading = filter.job === undefined ? 'Runs' : `Runs of ${filter.job}`;
  const body = html`<h1>${heading}</h1>
    ${filter.job === undefined ? '' : html`<p><a href="/">All jobs</a></p>`}
    ${
      items.length === 0
        ? html`<p class="muted">No runs yet.</p>`
        : html`<table class="runs">
            <thead>
              <tr>
                <th>Run</th>
                <th>Job</th>
                <th>Status</th>
                <th>Trigger</th>
                <th>Started</th>
                <th class="n">Read</th>
                <th class="n">Created</th>
                <th class="n">Updated</th>
                <th class="n">Unchanged</th>
                <th class="n">Skipped</th>
                <th class="n">Deleted</th>
                <th class="n">Dead-lettered</th>
                <th class="n">Requests</th>
                <th class="n">Duration</th>
              </tr>
            </thead>
            <tbody>
              ${rows}
            </tbody>
          </table>`
    }`;
  return layout(heading, body);
}
