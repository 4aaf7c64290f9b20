import type { DeadLetterEntry } from '../../sync/state/dead-letter-entry.ts';
import { positionLabel } from '../../sync/state/dead-letter-format.ts';
import { formatTime, href, html } from './html.ts';
import type { SafeHtml } from './html.ts';

/**
 * Dead letters as a table: position, field, code and the full reason, each escaped.
 * Each cell carries its column's name, so a narrow window (the stylesheet's 900 px
 * rule) shows a row as a card of labelled values with the reason across its width.
 */
export function deadLetterTable(
  entries: readonly DeadLetterEntry[],
  options: { showRun: boolean },
): SafeHtml {
  if (entries.length === 0) return html`<p class="muted">No dead letters.</p>`;
  const rows = entries.map(
    (e) =>
      html`<tr>
        <td data-label="Category"><span class="badge">${e.category}</span></td>
        <td data-label="Job"><a href="${href(`/jobs/${encodeURIComponent(e.job)}`)}">${e.job}</a></td>
        ${
          options.showRun
            ? html`<td data-label="Run">
                <a href="${href(`/runs/${encodeURIComponent(e.runId)}`)}">${e.runId}</a>
              </td>`
            : ''
        }
        <td data-label="Position">${positionLabel(e.source.position)}</td>
        <td data-label="Field">
          ${e.field === undefined ? html`<span class="muted">-</span>` : html`<code>${e.field}</code>`}
        </td>
        <td class="n" data-label="Code">${e.errorCode ?? ''}</td>
        <td class="reason" data-label="Reason">${e.message}</td>
        <td class="n" data-label="Attempts">${e.attempts}</td>
        <td data-label="Created">${formatTime(e.createdAt)}</td>
        <td data-label="Id"><code>${e.id}</code></td>
      </tr>`,
  );
  return html`<table class="dead-letters">
    <thead>
      <tr>
        <th>Category</th>
        <th>Job</th>
        ${options.showRun ? html`<th>Run</th>` : ''}
        <th>Position</th>
        <th>Field</th>
        <th class="n">Code</th>
        <th>Reason</th>
        <th class="n">Attempts</th>
        <th>Created</th>
        <th>Id</th>
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}
