/**
 * Server-side HTML for the dashboard pages: a tagged template that escapes every
 * interpolated value unless it is itself {@link SafeHtml}. Escaping by default is what
 * keeps a dead letter whose reason holds `<script>` (source data is untrusted) inert.
 */

const SAFE: unique symbol = Symbol('safe-html');

/** Markup built by {@link html}: its interpolations were escaped when it was built. */
export interface SafeHtml {
  readonly [SAFE]: string;
}

/** What may be interpolated: text and numbers are escaped, arrays are joined, null/undefined/false print nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function isSafe(value: unknown): value is SafeHtml {
  return typeof value === 'object' && value !== null && SAFE in value;
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (typeof value === 'string') return escapeHtml(value);
  if (typeof value === 'number' || typeof value === 'boolean') return escapeHtml(String(value));
  if (isSafe(value)) return value[SAFE];
  return value.map(render).join('');
}

/** `html\`<td>${value}</td>\``: the literal parts are trusted, the values are not. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return { [SAFE]: out };
}

/** The markup as a string, for the response body. */
export function toHtmlString(value: SafeHtml): string {
  return value[SAFE];
}

/** A URL path with query parameters (undefined ones left out), for links. */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const search = params.toString();
  return search === '' ? path : `${path}?${search}`;
}

/** Milliseconds as a person reads them: `850 ms`, `12.4 s`, `3 min 05 s`, `2 h 01 min`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/**
 * A time the page's script (dashboard-script.ts) rewrites into the viewer's own zone;
 * without the script it reads as UTC.
 */
export function localTime(at: string | number | undefined): SafeHtml {
  if (at === undefined || at === '') return html``;
  const iso = new Date(at).toISOString();
  return html`<time datetime="${iso}" data-local>${formatTime(iso)}</time>`;
}

/** An ISO timestamp shortened to `YYYY-MM-DD HH:mm:ss` UTC. */
export function formatTime(iso: string | undefined): string {
  if (iso === undefined || iso === '') return '';
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#1d2430;color:#fff;padding:10px 24px;display:flex;gap:20px;align-items:center}
header a{color:#cfe0ff;text-decoration:none}header strong{margin-right:12px}
main{padding:16px 24px;max-width:1400px}
table{border-collapse:collapse;background:#fff;width:100%;margin:8px 0 20px}
th,td{border-bottom:1px solid #e3e6ea;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.reason{white-space:pre-wrap;word-break:break-word;max-width:640px}
.badge{padding:1px 8px;border-radius:10px;font-size:12px;background:#e3e6ea;white-space:nowrap}
table.report{width:auto;min-width:360px}
.completed{background:#d5f5df}.failed{background:#fbd9d9}.running,.finalizing{background:#dbe8ff}
.skipped{background:#fff1c7}.muted{color:#6b7480}dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px}
dt{color:#6b7480}dd{margin:0}.counts a{margin-right:14px}code{font-size:13px}
time{white-space:nowrap}.unhealthy{background:#fbd9d9;color:#8a1c1c}.paused{background:#fff1c7}.spark{vertical-align:middle}
.actions{display:flex;gap:8px;align-items:center;margin:8px 0 16px}
button{font:inherit;padding:4px 12px;border:1px solid #9aa5b4;border-radius:4px;background:#fff;cursor:pointer}
button:hover{background:#eef1f5}[role=status]{min-height:1.4em}
.charts{display:flex;flex-wrap:wrap;gap:16px}figure.chart{margin:0;background:#fff;padding:8px 12px;border:1px solid #e3e6ea}
figcaption{font-weight:600;margin-bottom:4px}pre.spec{background:#fff;border:1px solid #e3e6ea;padding:10px;overflow:auto}
form.filter{display:flex;flex-wrap:wrap;gap:10px;align-items:end;margin:8px 0}form.filter label{display:flex;flex-direction:column;font-size:12px;color:#6b7480}
form.filter input,form.filter select{font:inherit;padding:3px 6px;max-width:240px}a.button{border:1px solid #9aa5b4;border-radius:4px;padding:4px 12px;background:#fff;text-decoration:none;color:inherit}
.next-step{background:#fff;border:1px solid #e3e6ea;border-left:4px solid #c62828;padding:2px 16px 6px;margin:12px 0;max-width:900px}
.next-step.completed{border-left-color:#c77700}.next-step h2{font-size:16px;margin:8px 0 4px}.next-step li{margin:4px 0}.next-step code{white-space:nowrap}
section.conflict{background:#fff;border:1px solid #e3e6ea;padding:4px 16px 8px;margin:0 0 16px}.open{background:#fff1c7}.resolved{background:#d5f5df}
.pages a{margin-right:16px}.wide-table{overflow-x:auto}table.reasons td.where{color:#6b7480}
@media (max-width:900px){main{padding:12px}header{padding:10px 12px;gap:14px;flex-wrap:wrap}
table.dead-letters thead{display:none}table.dead-letters,table.dead-letters tbody,table.dead-letters tr{display:block}
table.dead-letters tr{border-bottom:2px solid #c9ced6;padding:4px 0}
table.dead-letters td{display:inline-block;border:0;padding:2px 8px;text-align:left}
table.dead-letters td::before{content:attr(data-label) " ";color:#6b7480;font-size:12px}
table.dead-letters td.reason{display:block;max-width:none}table.dead-letters td:empty{display:none}}`;

/** How a page behaves in the browser. */
export interface LayoutOptions {
  /**
   * The page shows a run that is still going: the script reloads its content every few
   * seconds while the tab is visible, and stops once the page it loads is quiet.
   */
  live?: boolean;
}

/** A whole page: title, navigation to the other pages and bull-board, and the body. */
export function layout(title: string, body: SafeHtml, options: LayoutOptions = {}): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>${title} · rowbridge</title>
        <script src="/assets/dashboard.js" defer></script>
        <style>
          ${{ [SAFE]: STYLE }}
        </style>
      </head>
      <body ${options.live === true ? html`data-live="true"` : ''}>
        <header>
          <strong>rowbridge</strong><a href="/jobs">Jobs</a><a href="/runs">Runs</a
          ><a href="/dead-letters">Dead letters</a><a href="/conflicts">Conflicts</a
          ><a href="/queues">Queues</a><a href="/metrics">Metrics</a>
        </header>
        <main>${body}</main>
      </body>
    </html>`;
}

/** A status badge; the class is the status, which is one of a fixed set but escaped anyway. */
export function badge(status: string): SafeHtml {
  return html`<span class="badge ${status}">${status}</span>`;
}
