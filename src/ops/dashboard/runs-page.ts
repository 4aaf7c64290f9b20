import type { RunRecord, RunReport, RunStatus } from '../../sync/state/run-store.ts';
import { TERMINAL_STATUSES } from '../../sync/state/run-store.ts';
import { badge, formatDuration, formatTime, href, html, layout } from './html.ts';
import type { SafeHtml } from './html.ts';

/** A run with its report, as the runs list shows it. */
export interface RunListItem {
  record: RunRecord;
  report: RunReport;
}

/** Every status a run can have, in the order a run goes through them. */
export const RUN_STATUSES: readonly RunStatus[] = [
  'queued',
  'running',
  'finalizing',
  'completed',
  'failed',
  'skipped',
];

/** What the runs page shows. */
export interface RunsPageData {
  items: readonly RunListItem[];
  filter: { job?: string | undefined; status?: RunStatus | undefined };
  /** Job names to choose from (the jobs folder's and the filter's). */
  jobs: readonly string[];
  /** Cursor of the next page, when there is one. */
  next?: string | undefined;
  /** This page is not the first (a link back to the newest runs is offered). */
  paged?: boolean;
}

/** Whether a run is still going, so a page that shows it keeps itself current. */
export function isActive(record: RunRecord): boolean {
  return !TERMINAL_STATUSES.has(record.status);
}

function filterForm(data: RunsPageData): SafeHtml {
  const { filter } = data;
  const jobs = [...new Set([...data.jobs, ...(filter.job === undefined ? [] : [filter.job])])].sort();
  return html`<form class="filter" method="get" action="/runs">
    <label
      >Job
      <select name="job">
        <option value="">all</option>
        ${jobs.map((j) => html`<option value="${j}" ${j === filter.job ? html`selected` : ''}>${j}</option>`)}
      </select></label
    >
    <label
      >Status
      <select name="status">
        <option value="">all</option>
        ${RUN_STATUSES.map(
          (s) => html`<option value="${s}" ${s === filter.status ? html`selected` : ''}>${s}</option>`,
        )}
      </select></label
    >
    <button type="submit">Filter</button>
    <a href="/runs">Clear</a>
  </form>`;
}

function row({ record, report }: RunListItem): SafeHtml {
  const link = href(`/runs/${encodeURIComponent(record.runId)}`);
  return html`<tr>
    <td>
      <a href="${link}"><code>${record.runId}</code></a>
    </td>
    <td><a href="${href('/runs', { job: record.job })}">${record.job}</a></td>
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
}

/** `/runs?job=J&status=S`: runs of every job, newest first, a page at a time, each linking to its report. */
export function renderRunsPage(data: RunsPageData): SafeHtml {
  const { items, filter } = data;
  const heading = filter.job === undefined ? 'Runs' : `Runs of ${filter.job}`;
  const query = { job: filter.job, status: filter.status };
  const body = html`<h1>${heading}${filter.status === undefined ? '' : html` ${badge(filter.status)}`}</h1>
    ${filterForm(data)}
    ${
      items.length === 0
        ? html`<p class="muted">
            No runs${filter.status === undefined && filter.job === undefined ? ' yet' : ' match'}.
          </p>`
        : html`<div class="wide-table">
            <table class="runs">
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
                ${items.map(row)}
              </tbody>
            </table>
          </div>`
    }
    <p class="pages">
      ${data.paged === true ? html`<a href="${href('/runs', query)}">Newest runs</a>` : ''}
      ${data.next === undefined ? '' : html`<a href="${href('/runs', { ...query, cursor: data.next })}">Older runs</a>`}
    </p>`;
  return layout(heading, body, { live: items.some(({ record }) => isActive(record)) });
}
