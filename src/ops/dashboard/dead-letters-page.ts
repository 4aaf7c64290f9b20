import type { ErrorCategory } from '../../ground/errors.ts';
import type { DeadLetterEntry } from '../../sync/state/dead-letter-entry.ts';
import type { DeadLetterFilter } from '../../sync/state/dead-letter-store.ts';
import { deadLetterTable } from './dead-letter-table.ts';
import { href, html, layout } from './html.ts';
import type { SafeHtml } from './html.ts';

/** What the dead-letters page shows. */
export interface DeadLettersPageData {
  filter: DeadLetterFilter;
  /** Entries per category under the job/run part of the filter. */
  counts: Partial<Record<ErrorCategory, number>>;
  entries: readonly DeadLetterEntry[];
  next?: string | undefined;
}

/** `/dead-letters?category=C&job=J&run=R`: counts by category, then the entries with their reasons. */
export function renderDeadLettersPage(data: DeadLettersPageData): SafeHtml {
  const { filter, counts } = data;
  const scope = { job: filter.job, run: filter.runId };
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
  ].filter(Boolean);
  const body = html`<h1>Dead letters${narrowed.length === 0 ? '' : `: ${narrowed.join(', ')}`}</h1>
    <p class="counts">
      ${filter.category === undefined ? html`<strong>all: ${total}</strong> ` : html`<a href="${href('/dead-letters', scope)}">all: ${total}</a>`}${categoryLinks}
    </p>
    <p class="muted">
      Replay or purge with <code>rowbridge dlq replay|purge</code>. The batch jobs that wrote them are in the
      <a href="/queues/queue/batches">queue dashboard</a>.
    </p>
    ${deadLetterTable(data.entries, { showRun: true })}
    ${data.next === undefined ? '' : html`<p><a href="${href('/dead-letters', { ...scope, category: filter.category, cursor: data.next })}">Next page</a></p>`}`;
  return layout('Dead letters', body);
}
