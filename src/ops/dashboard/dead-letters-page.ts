import { ERROR_CATEGORIES } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { DeadLetterEntry } from '../../sync/state/dead-letter-entry.ts';
import type { DeadLetterQuery } from './dead-letter-query.ts';
import { deadLetterTable } from './dead-letter-table.ts';
import { href, html, layout } from './html.ts';
import type { SafeHtml } from './html.ts';

/** What the dead-letters page shows. */
export interface DeadLettersPageData {
  filter: DeadLetterQuery;
  /** Entries per category under the job/run part of the filter. */
  counts: Partial<Record<ErrorCategory, number>>;
  entries: readonly DeadLetterEntry[];
  next?: string | undefined;
  /** Whether the CSV download carries the rows (a writable dashboard) or only the reasons. */
  csvHasRows?: boolean;
}

/** The filter as query parameters, for links that keep it. */
function filterQuery(filter: DeadLetterQuery): Record<string, string | number | undefined> {
  return {
    job: filter.job,
    run: filter.runId,
    category: filter.category,
    field: filter.field,
    code: filter.errorCode,
  };
}

function filterForm(filter: DeadLetterQuery, entries: readonly DeadLetterEntry[]): SafeHtml {
  // Suggestions from what is listed: the store keeps no index of fields or codes.
  const fields = [...new Set(entries.map((e) => e.field).filter((f): f is string => f !== undefined))].sort();
  const codes = [
    ...new Set(entries.map((e) => e.errorCode).filter((c): c is number => c !== undefined)),
  ].sort();
  return html`<form class="filter" method="get" action="/dead-letters">
    <label>Job <input name="job" value="${filter.job ?? ''}" size="14" /></label>
    <label
      >Category
      <select name="category">
        <option value="">all</option>
        ${ERROR_CATEGORIES.map(
          (c) => html`<option value="${c}" ${c === filter.category ? html`selected` : ''}>${c}</option>`,
        )}
      </select></label
    >
    <label>Field <input name="field" value="${filter.field ?? ''}" size="14" list="dlq-fields" /></label>
    <label
      >Code
      <input name="code" value="${filter.errorCode ?? ''}" size="8" inputmode="numeric" list="dlq-codes"
    /></label>
    ${filter.runId === undefined ? '' : html`<input type="hidden" name="run" value="${filter.runId}" />`}
    <datalist id="dlq-fields">${fields.map((f) => html`<option value="${f}"></option>`)}</datalist>
    <datalist id="dlq-codes">${codes.map((c) => html`<option value="${c}"></option>`)}</datalist>
    <button type="submit">Filter</button>
    <a href="/dead-letters">Clear</a>
  </form>`;
}

/** `/dead-letters?job=J&category=C&field=F&code=N&run=R`: counts by category, the filter, the entries with their reasons. */
export function renderDeadLettersPage(data: DeadLettersPageData): SafeHtml {
  const { filter, counts } = data;
  const query = filterQuery(filter);
  const scope = { job: filter.job, run: filter.runId, field: filter.field, code: filter.errorCode };
  const total = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
  const categoryLinks = Object.entries(counts).map(([category, n]) =>
    category === filter.category
      ? html`<strong>${category}: ${n}</strong> `
      : html`<a href="${href('/dead-letters', { ...scope, category })}">${category}: ${n}</a>`,
  );
  const narrowed = [
    filter.category === undefined ? '' : `category ${filter.category}`,
    filter.job === undefined ? '' : `job ${filter.job}`,
    filter.runId === undefined ? '' : `run ${filter.runId}`,
    filter.field === undefined ? '' : `field ${filter.field}`,
    filter.errorCode === undefined ? '' : `code ${filter.errorCode}`,
  ].filter(Boolean);
  const byFieldOrCode = filter.field !== undefined || filter.errorCode !== undefined;
  const body = html`<h1>Dead letters${narrowed.length === 0 ? '' : `: ${narrowed.join(', ')}`}</h1>
    <p class="counts">
      ${filter.category === undefined ? html`<strong>all: ${total}</strong> ` : html`<a href="${href('/dead-letters', scope)}">all: ${total}</a>`}${categoryLinks}
      ${byFieldOrCode ? html`<span class="muted">(counts by job and run; the list below is narrowed by field or code too)</span>` : ''}
    </p>
    ${filterForm(filter, data.entries)}
    <p class="actions">
      <a class="button" href="${href('/dead-letters.csv', query)}" download>Download CSV</a>
      <span class="muted">
        ${
          data.csvHasRows === true
            ? html`every matching entry with its row, formula-safe; fix the rows and replay the file with
                <code>rowbridge dlq replay --file FILE</code>`
            : html`reasons only: the rows are personal data, served by a dashboard started with
                <code>--allow-writes</code> (or <code>rowbridge dlq export --csv</code>)`
        }
      </span>
    </p>
    <p class="muted">
      Replay or purge with <code>rowbridge dlq replay|purge</code>, or replay a job's dead letters from its
      <a href="/jobs">job page</a>. The batch jobs that wrote them are in the
      <a href="/queues/queue/batches">queue dashboard</a>.
    </p>
    ${deadLetterTable(data.entries, { showRun: true })}
    ${data.next === undefined ? '' : html`<p><a href="${href('/dead-letters', { ...query, cursor: data.next })}">Next page</a></p>`}`;
  return layout('Dead letters', body);
}
