import type { ErrorCategory } from '../../ground/errors.ts';
import type { RunHistoryItem } from '../../sync/state/run-history.ts';
import { badge, formatDuration, href, html, layout, localTime } from './html.ts';
import type { SafeHtml } from './html.ts';
import type { JobListing, ScheduleState } from './job-operations.ts';
import { modeOf, rowsPerSecond, rowsWritten, sourceSummary, targetSummary } from './job-summary.ts';
import { healthCell, scheduleCell } from './jobs-page.ts';
import { maskedSpecYaml } from '../../ground/mask-secrets.ts';
import { formatFigure, timeChart } from './svg-chart.ts';
import { isActive } from './runs-page.ts';
import { cdcLagSection, hooksSection, notifyFailuresSection } from './job-activity.ts';
import type { CdcLag } from '../../sync/cdc/cdc-lag.ts';
import type { HookCall } from '../../queue/hook-inbox.ts';
import type { NotifyFailure } from '../../queue/notify-delivery.ts';

/** What the job page shows. */
export interface JobPageData {
  job: JobListing;
  schedule: ScheduleState | undefined;
  /** Newest first. */
  runs: readonly RunHistoryItem[];
  deadLetters: Partial<Record<ErrorCategory, number>>;
  /** The last webhook calls, newest first. */
  hooks: readonly HookCall[];
  /** The last failed notification deliveries, newest first. */
  notifyFailures: readonly NotifyFailure[];
  /** A change stream's lag, as its consumer last saved it. */
  cdcLag?: CdcLag | undefined;
  /** Show the run, pause/resume and replay buttons. */
  allowWrites: boolean;
  unhealthyAfter: number;
}

function actions(data: JobPageData): SafeHtml {
  const base = `/jobs/${encodeURIComponent(data.job.name)}`;
  if (!data.allowWrites)
    return html`<p class="muted">
      Read-only dashboard: start it with <code>--allow-writes</code> to run, pause or replay.
    </p>`;
  if (data.job.spec === undefined) return html``;
  const deadTotal = Object.values(data.deadLetters).reduce((sum, n) => sum + (n ?? 0), 0);
  const scheduled = data.job.spec.schedule !== undefined;
  const paused = data.schedule?.pausedAt !== undefined;
  return html`<div class="actions">
      <button type="button" data-action="${base}/run" data-pending="Queueing a run…">Run now</button>
      ${
        scheduled
          ? paused
            ? html`<button type="button" data-action="${base}/resume" data-reload="true">
                Resume schedule
              </button>`
            : html`<button type="button" data-action="${base}/pause" data-reload="true">
                Pause schedule
              </button>`
          : ''
      }
      ${
        deadTotal > 0
          ? html`<button type="button" data-action="${base}/replay" data-pending="Queueing the replay…">
              Replay ${deadTotal} dead letter${deadTotal === 1 ? '' : 's'}
            </button>`
          : ''
      }
    </div>
    <p id="action-status" role="status"></p>`;
}

function runsTable(runs: readonly RunHistoryItem[]): SafeHtml {
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  return html`<div class="wide-table">
    <table class="runs">
      <thead>
        <tr>
          <th>Run</th>
          <th>Status</th>
          <th>Trigger</th>
          <th>Started</th>
          <th class="n">Read</th>
          <th class="n">Written</th>
          <th class="n">Dead-lettered</th>
          <th class="n">Rows/s</th>
          <th class="n">Requests</th>
          <th class="n">Throttled</th>
          <th class="n">Duration</th>
        </tr>
      </thead>
      <tbody>
        ${runs.map(({ record, report }) => {
          const link = href(`/runs/${encodeURIComponent(record.runId)}`);
          return html`<tr>
            <td>
              <a href="${link}"><code>${record.runId}</code></a>
            </td>
            <td>${badge(record.status)}</td>
            <td>${record.trigger ?? ''}</td>
            <td>${localTime(record.startedAt ?? record.createdAt)}</td>
            <td class="n">${report.read}</td>
            <td class="n">${rowsWritten(report)}</td>
            <td class="n">${report.deadLetteredTotal}</td>
            <td class="n">${formatFigure(rowsPerSecond(report))}</td>
            <td class="n">${report.requests}</td>
            <td class="n">${report.throttled}</td>
            <td class="n">${report.durationMs > 0 ? formatDuration(report.durationMs) : ''}</td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

/** `/jobs/:name`: the spec (secrets masked), its schedule and health, the actions, charts and runs. */
export function renderJobPage(data: JobPageData): SafeHtml {
  const { job } = data;
  const spec = job.spec;
  // Charts read left to right in time; runs that never started have no rate to show.
  const started = [...data.runs].reverse().filter(({ record }) => record.startedAt !== undefined);
  const at = (item: RunHistoryItem) => Date.parse(item.record.startedAt ?? item.record.createdAt);
  const categories = Object.entries(data.deadLetters).map(
    ([category, n]) =>
      html`<a href="${href('/dead-letters', { job: job.name, category })}">${category}: ${n}</a>`,
  );
  const body = html`<h1>Job ${job.name}</h1>
    ${
      spec === undefined
        ? html`<p class="reason"><span class="badge failed">invalid</span> ${job.error ?? ''}</p>`
        : html`<dl>
            <dt>Source</dt>
            <dd>${sourceSummary(spec)}</dd>
            <dt>Target</dt>
            <dd>${targetSummary(spec)}</dd>
            <dt>Mode</dt>
            <dd>${modeOf(spec)}</dd>
            <dt>Schedule</dt>
            <dd class="schedule">${scheduleCell(job, data.schedule)}</dd>
            <dt>Health</dt>
            <dd class="health">${healthCell(data.runs, data.unhealthyAfter)}</dd>
            <dt>Dead letters</dt>
            <dd class="counts">
              ${categories.length === 0 ? html`<span class="muted">none</span>` : categories}
            </dd>
          </dl>`
    }
    ${actions(data)} ${cdcLagSection(spec, data.cdcLag)}
    <h2>Over time</h2>
    ${
      spec?.incremental === undefined
        ? ''
        : html`<p class="muted">
            An incremental run reads only what changed, so its rows per second say little: its duration and
            requests show whether it keeps up.
          </p>`
    }
    <div class="charts">
      ${timeChart(
        started.map((item) => ({
          x: at(item),
          y: rowsPerSecond(item.report),
          label: `${item.record.runId}: ${formatFigure(rowsPerSecond(item.report))} rows/s`,
        })),
        { title: 'Rows written per second', unit: 'rows/s', color: '#2f6fdf' },
      )}
      ${timeChart(
        started.map((item) => ({
          x: at(item),
          y: item.report.durationMs / 1000,
          label: `${item.record.runId}: ${formatDuration(item.report.durationMs)}`,
        })),
        { title: 'Duration per run', unit: 'seconds', color: '#5b6b7f' },
      )}
      ${timeChart(
        started.map((item) => ({
          x: at(item),
          y: item.report.requests,
          label: `${item.record.runId}: ${item.report.requests} requests`,
        })),
        { title: 'Requests per run', unit: 'requests', color: '#2e7d32' },
      )}
      ${timeChart(
        started.map((item) => ({
          x: at(item),
          y: item.report.throttled,
          label: `${item.record.runId}: ${item.report.throttled} throttled of ${item.report.requests} requests`,
        })),
        { title: 'Throttled answers per run', unit: 'answers', color: '#c77700' },
      )}
    </div>
    <h2>Runs</h2>
    ${runsTable(data.runs)} ${hooksSection(spec, data.hooks)} ${notifyFailuresSection(data.notifyFailures)}
    ${
      spec === undefined
        ? ''
        : html`<h2>Spec</h2>
            <p class="muted">
              As written in the job file; <code>\${ENV}</code> references are shown by name and credentials
              are masked.
            </p>
            <pre class="spec"><code>${maskedSpecYaml(job.document ?? spec)}</code></pre>`
    }`;
  return layout(`Job ${job.name}`, body, { live: data.runs.some(({ record }) => isActive(record)) });
}
