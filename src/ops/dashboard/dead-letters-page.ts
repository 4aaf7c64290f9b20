import { ERROR_CATEGORIES } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { DeadLetterEntry } from '../../sync/state/dead-letter-entry.ts';
import type { DeadLetterQuery } from './dead-letter-query.ts';
import type { DeadLetterSummary } from './dead-letter-summary.ts';
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
  /** The reasons of the whole filter, and the fields, codes and jobs to choose from. */
  summary: DeadLetterSummary;
  /** The jobs folder's job names, offered besides the jobs the entries name. */
  jobs: readonly string[];
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

function select(
  label: string,
  name: string,
  chosen: string | number | undefined,
  choices: ReadonlyArray<string | number>,
): SafeHtml {
  // The chosen value stays offered even when the entries read no longer name it.
  const all = chosen === undefined || choices.includes(chosen) ? choices : [chosen, ...choices];
  return html`<label
    >${label}
    <select name="${name}">
      <option value="">all</option>
      ${all.map((c) => html`<option value="${c}" ${c === chosen ? html`selected` : ''}>${c}</option>`)}
    </select></label
  >`;
}

function filterForm(filter: DeadLetterQuery, summary: DeadLetterSummary, jobs: readonly string[]): SafeHtml {
  const jobChoices = [...new Set([...jobs, ...summary.jobs])].sort();
  return html`<form class="filter" method="get" action="/dead-letters">
    ${select('Job', 'job', filter.job, jobChoices)}
    ${select('Category', 'category', filter.category, ERROR_CATEGORIES)}
    ${select('Field', 'field', filter.field, summary.fields)}
    ${select('Code', 'code', filter.errorCode, summary.codes)}
    ${filter.runId === undefined ? '' : html`<input type="hidden" name="run" value="${filter.runId}" />`}
    <button type="submit">Filter</button>
    <a href="/dead-letters">Clear</a>
  </form>`;
}

function reasonsTable(filter: DeadLetterQuery, summary: DeadLetterSummary): SafeHtml {
  if (summary.groups.length === 0) return html``;
  const rows = summary.groups.map((g) => {
    const narrowed = href('/dead-letters', {
      job: filter.job ?? (g.jobs.length === 1 ? g.jobs[0] : undefined),
      run: filter.runId,
      category: g.category,
      field: g.field,
      code: g.errorCode,
    });
    const more = g.count - g.positions.length;
    return html`<tr>
      <td class="n"><a href="${narrowed}">${g.count}</a></td>
      <td class="why">
        ${g.reason}
        <div class="muted">
          <span class="badge">${g.category}</span
          >${g.field === undefined ? '' : html` field <code>${g.field}</code>`}${g.errorCode === undefined ? '' : ` code ${g.errorCode}`}
          · ${g.jobs.join(', ')}
        </div>
      </td>
      <td class="where">${g.positions.join(', ')}${more > 0 ? ` and ${more} more` : ''}</td>
    </tr>`;
  });
  return html`<h2>By reason</h2>
    <table class="reasons">
      <thead>
        <tr>
          <th class="n">Rows</th>
          <th>Reason</th>
          <th>Where</th>
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
    ${
      summary.complete
        ? ''
        : html`<p class="muted">
            Summarised from the newest ${summary.scanned} dead letters; narrow the filter for the rest.
          </p>`
    }`;
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
    ${filterForm(filter, data.summary, data.jobs)} ${reasonsTable(filter, data.summary)}
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
    <h2>Rows</h2>
    ${deadLetterTable(data.entries, { showRun: true })}
    ${data.next === undefined ? '' : html`<p><a href="${href('/dead-letters', { ...query, cursor: data.next })}">Next page</a></p>`}`;
  return layout('Dead letters', body);
}
