import { scheduleOf } from '../../sync/job-spec/schedule-schema.ts';
import type { RunHistoryItem } from '../../sync/state/run-history.ts';
import { badge, href, html, layout, localTime } from './html.ts';
import type { SafeHtml } from './html.ts';
import type { JobListing, ScheduleState } from './job-operations.ts';
import { failureStreak, lastRun, modeOf, rowsWritten, sourceSummary, targetSummary } from './job-summary.ts';
import { sparkline } from './svg-chart.ts';
import { isActive } from './runs-page.ts';

/** What the jobs page shows. */
export interface JobsPageData {
  jobs: readonly JobListing[];
  schedules: ReadonlyMap<string, ScheduleState>;
  /** Each job's recent runs, newest first. */
  runs: ReadonlyMap<string, readonly RunHistoryItem[]>;
  /** Failed runs in a row from which a job is marked unhealthy. */
  unhealthyAfter: number;
}

/** The schedule cell: the cron, then the next run in the viewer's zone, or why there is none. */
export function scheduleCell(job: JobListing, state: ScheduleState | undefined): SafeHtml {
  if (job.spec?.schedule === undefined) return html`<span class="muted">manual</span>`;
  const { pattern, tz } = scheduleOf(job.spec.schedule);
  let when: SafeHtml;
  if (state?.pausedAt !== undefined)
    when = html`<span class="badge paused">paused</span>
      <span class="muted">since ${localTime(state.pausedAt)}</span>`;
  else if (state?.next !== undefined) when = html`next ${localTime(state.next)}`;
  else when = html`<span class="muted">not registered: no worker has started since it was added</span>`;
  return html`<code>${pattern}</code>${tz === undefined ? '' : html` (${tz})`}<br />${when}`;
}

/** The health cell: unhealthy after N failures in a row. */
export function healthCell(runs: readonly RunHistoryItem[], unhealthyAfter: number): SafeHtml {
  const streak = failureStreak(runs);
  if (streak >= unhealthyAfter)
    return html`<span class="badge unhealthy" title="the last ${streak} runs failed">unhealthy</span>
      <span class="muted">${streak} failed in a row</span>`;
  if (runs.length === 0) return html`<span class="muted">no runs</span>`;
  return streak > 0 ? html`<span class="muted">${streak} failed in a row</span>` : html`ok`;
}

/** `/jobs`: every job of the jobs folder with its schedule, last run, trends and health. */
export function renderJobsPage(data: JobsPageData): SafeHtml {
  const rows = data.jobs.map((job) => {
    const runs = data.runs.get(job.name) ?? [];
    const oldestFirst = [...runs].reverse();
    const last = lastRun(runs);
    const link = href(`/jobs/${encodeURIComponent(job.name)}`);
    if (job.spec === undefined) {
      return html`<tr class="job" data-job="${job.name}">
        <td><a href="${link}">${job.name}</a></td>
        <td colspan="8" class="reason"><span class="badge failed">invalid</span> ${job.error ?? ''}</td>
      </tr>`;
    }
    return html`<tr class="job" data-job="${job.name}">
      <td><a href="${link}">${job.name}</a></td>
      <td>${sourceSummary(job.spec)}</td>
      <td>${targetSummary(job.spec)}</td>
      <td>${modeOf(job.spec)}</td>
      <td class="schedule">${scheduleCell(job, data.schedules.get(job.name))}</td>
      <td class="last-run">
        ${
          last === undefined
            ? html`<span class="muted">never run</span>`
            : html`${badge(last.record.status)}
                <a href="${href(`/runs/${encodeURIComponent(last.record.runId)}`)}"
                  >${localTime(last.record.startedAt ?? last.record.createdAt)}</a
                >`
        }
      </td>
      <td class="rows-trend">
        ${sparkline(
          oldestFirst.map(({ report }) => rowsWritten(report)),
          { label: 'Rows written', color: '#2f6fdf' },
        )}
      </td>
      <td class="dead-trend">
        ${sparkline(
          oldestFirst.map(({ report }) => report.deadLetteredTotal),
          { label: 'Dead letters', color: '#c62828', bars: true },
        )}
      </td>
      <td class="health">${healthCell(runs, data.unhealthyAfter)}</td>
    </tr>`;
  });
  const body = html`<h1>Jobs</h1>
    ${
      data.jobs.length === 0
        ? html`<p class="muted">No job files in the jobs folder.</p>`
        : html`<table class="jobs">
              <thead>
                <tr>
                  <th>Job</th>
                  <th>Source</th>
                  <th>Target</th>
                  <th>Mode</th>
                  <th>Schedule</th>
                  <th>Last run</th>
                  <th>Rows written</th>
                  <th>Dead letters</th>
                  <th>Health</th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>
            <p class="muted">
              Trends over each job's last 30 runs, oldest left. A job is unhealthy after
              ${data.unhealthyAfter} failed runs in a row. Times are in your browser's zone.
            </p>`
    }`;
  const live = [...data.runs.values()].some((runs) => runs.some(({ record }) => isActive(record)));
  return layout('Jobs', body, { live });
}
