/**
 * `/conflicts` (issue 25): the open two-way conflicts of every two-way job, with what
 * `rowbridge conflicts show` prints (each field's worksheet, table and last synced value,
 * when each side changed the record) and, on a dashboard started with --allow-writes,
 * the actions of `conflicts resolve`: take the table's values, the worksheet's, or one
 * value for a single field. The buttons post through the page's script with the CSRF
 * header, like the job page's.
 */
import type { Conflict } from '../../sync/two-way/link-store.ts';
import { describeResolution } from '../../sync/two-way/conflict-resolution.ts';
import { badge, href, html, layout, localTime } from './html.ts';
import type { SafeHtml } from './html.ts';

/** The conflicts of one two-way job, or why its state could not be read. */
export interface JobConflicts {
  job: string;
  conflicts: readonly Conflict[];
  error?: string;
}

/** What the conflicts page shows. */
export interface ConflictsPageData {
  jobs: readonly JobConflicts[];
  /** The job filter, when one is set. */
  job?: string;
  allowWrites: boolean;
}

function lastSynced(f: NonNullable<Conflict['fields']>[number]): SafeHtml {
  if (f.last !== undefined) return html`<code>${JSON.stringify(f.last)}</code>`;
  return html`<span class="muted"
    >${f.base === undefined ? 'none: never synced' : 'not kept (only conflict: manual fields keep it)'}</span
  >`;
}

function actions(job: string, c: Conflict, n: number, allowWrites: boolean): SafeHtml {
  if (c.kind !== 'fields')
    return html`<p class="muted">Change or fill the key on one side: a value cannot resolve this.</p>`;
  if (!allowWrites)
    return html`<p class="muted">
      Read-only dashboard: start it with <code>--allow-writes</code> to resolve.
    </p>`;
  const base = `/conflicts/${encodeURIComponent(job)}/${encodeURIComponent(c.id)}`;
  const status = `conflict-status-${n}`;
  const single = (c.fields ?? []).length === 1;
  return html`<div class="actions">
      <button type="button" data-action="${base}/take-source" data-status="${status}" data-reload="true">
        Take the table value${single ? '' : 's'}
      </button>
      <button type="button" data-action="${base}/take-worksheet" data-status="${status}" data-reload="true">
        Take the worksheet value${single ? '' : 's'}
      </button>
      ${
        single
          ? html`<label
                >Value for both sides <input id="conflict-value-${n}" type="text" autocomplete="off" /></label
              ><button
                type="button"
                data-action="${base}/take-value"
                data-value-from="conflict-value-${n}"
                data-status="${status}"
                data-reload="true"
              >
                Set this value
              </button>`
          : ''
      }
    </div>
    <p id="${status}" role="status"></p>`;
}

function conflictSection(job: string, c: Conflict, n: number, allowWrites: boolean): SafeHtml {
  const list = (ids: readonly string[] | undefined) => (ids?.length ? ids.join(', ') : 'none');
  return html`<section class="conflict" data-conflict="${job}/${c.id}">
    <h3><code>${job}/${c.id}</code> key <code>${JSON.stringify(c.matchKey)}</code></h3>
    <dl>
      <dt>Raised</dt>
      <dd>${localTime(c.at)}</dd>
      ${
        c.kind === 'ambiguous'
          ? html`<dt>Table records</dt>
              <dd>${list(c.records?.source)}</dd>
              <dt>Worksheet rows</dt>
              <dd>${list(c.records?.worksheet)}</dd>`
          : html`<dt>Records</dt>
              <dd>table key <code>${c.key ?? '?'}</code>, worksheet row <code>${c.rowId ?? '?'}</code></dd>
              <dt>Worksheet changed</dt>
              <dd>${c.worksheetUpdatedAt === undefined ? 'unknown' : localTime(c.worksheetUpdatedAt)}</dd>
              <dt>Table changed</dt>
              <dd>${c.sourceUpdatedAt === undefined ? 'unknown' : localTime(c.sourceUpdatedAt)}</dd>`
      }
      <dt>State</dt>
      <dd class="state">
        ${
          c.take === undefined
            ? badge('open')
            : html`${badge('resolved')} ${describeResolution(c.take)} on both sides at the next run`
        }
      </dd>
    </dl>
    ${
      c.kind === 'fields'
        ? html`<table class="conflict-fields">
            <thead>
              <tr>
                <th>Field</th>
                <th>Worksheet</th>
                <th>Table</th>
                <th>Last synced</th>
              </tr>
            </thead>
            <tbody>
              ${(c.fields ?? []).map(
                (f) =>
                  html`<tr>
                    <td>${f.field}</td>
                    <td><code>${JSON.stringify(f.worksheet)}</code></td>
                    <td><code>${JSON.stringify(f.source)}</code></td>
                    <td>${lastSynced(f)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : html`<p class="reason">
            This key is held by more than one record, or is empty: these records are not created on the other
            side until each key value is held once.
          </p>`
    }
    ${actions(job, c, n, allowWrites)}
  </section>`;
}

/** `/conflicts`: every two-way job's open conflicts, oldest first. */
export function renderConflictsPage(data: ConflictsPageData): SafeHtml {
  let n = 0;
  const total = data.jobs.reduce((sum, j) => sum + j.conflicts.length, 0);
  const body = html`<h1>Conflicts${data.job === undefined ? '' : html` of job ${data.job}`}</h1>
    <p class="muted">
      Two-way fields changed on both sides to different values, and keys held by more than one record. A
      decision is stored with the conflict and written by the job's next run (see docs/two-way.md).
      ${data.job === undefined ? '' : html`<a href="${href('/conflicts')}">All jobs</a>`}
    </p>
    ${
      data.jobs.length === 0
        ? html`<p class="muted">No two-way job in the jobs folder.</p>`
        : total === 0 && data.jobs.every((j) => j.error === undefined)
          ? html`<p class="muted">No conflicts.</p>`
          : ''
    }
    ${data.jobs.map(
      (j) =>
        html`${
          j.error !== undefined
            ? html`<h2><a href="${href(`/jobs/${encodeURIComponent(j.job)}`)}">${j.job}</a></h2>
                <p class="reason">${j.error}</p>`
            : j.conflicts.length === 0
              ? ''
              : html`<h2><a href="${href(`/jobs/${encodeURIComponent(j.job)}`)}">${j.job}</a></h2>
                  ${j.conflicts.map((c) => conflictSection(j.job, c, (n += 1), data.allowWrites))}`
        }`,
    )}`;
  return layout('Conflicts', body);
}
