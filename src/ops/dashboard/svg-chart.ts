/**
 * Charts drawn on the server as inline SVG: no chart library, no script, nothing the
 * CSP has to allow. Each chart carries a `<title>` and an aria-label that say in words
 * what it shows, so a screen reader (and a test) reads the figures, not the pixels.
 */
import { html } from './html.ts';
import type { SafeHtml } from './html.ts';

/** One value of a series, oldest first. */
export interface ChartPoint {
  /** When the run started (ms since the epoch): the axis labels of the first and last. */
  x: number;
  y: number;
  /** What the point's tooltip says (e.g. the run id and the value). */
  label: string;
}

function round(n: number): string {
  return String(Math.round(n * 10) / 10);
}

/** A figure as a person reads it: `0`, `12`, `3.4`, `1.2k`. */
export function formatFigure(n: number): string {
  if (n >= 10_000) return `${round(n / 1000)}k`;
  if (Number.isInteger(n)) return String(n);
  return n >= 100 ? String(Math.round(n)) : round(n);
}

/**
 * A sparkline of `values` (oldest first): a line with the last value dotted, or bars
 * when `bars` (counts that are mostly 0, like dead letters, read better as bars).
 */
export function sparkline(
  values: readonly number[],
  options: { label: string; color: string; bars?: boolean; width?: number; height?: number },
): SafeHtml {
  const width = options.width ?? 120;
  const height = options.height ?? 28;
  const max = Math.max(0, ...values);
  const last = values.at(-1);
  const words =
    values.length === 0
      ? `${options.label}: no runs yet`
      : `${options.label} over the last ${values.length} run${values.length === 1 ? '' : 's'}: last ${formatFigure(last ?? 0)}, highest ${formatFigure(max)}`;
  if (values.length === 0)
    return html`<span class="muted spark-empty" aria-label="${words}" title="${words}">–</span>`;
  const step = values.length > 1 ? (width - 4) / (values.length - 1) : 0;
  const y = (v: number) => (max === 0 ? height - 2 : height - 2 - (v / max) * (height - 4));
  let marks: SafeHtml;
  if (options.bars === true) {
    const barWidth = Math.max(1, Math.min(6, (width - 4) / values.length - 1));
    const slot = (width - 4) / values.length;
    marks = html`${values.map((v, i) =>
      v === 0
        ? html`<rect
            x="${round(2 + i * slot)}"
            y="${height - 2}"
            width="${round(barWidth)}"
            height="1"
            fill="#c9ced6"
          />`
        : html`<rect
            x="${round(2 + i * slot)}"
            y="${round(y(v))}"
            width="${round(barWidth)}"
            height="${round(height - 2 - y(v))}"
            fill="${options.color}"
          />`,
    )}`;
  } else {
    const points = values.map((v, i) => `${round(2 + i * step)},${round(y(v))}`).join(' ');
    marks = html`<polyline points="${points}" fill="none" stroke="${options.color}" stroke-width="1.5" />
      <circle
        cx="${round(2 + (values.length - 1) * step)}"
        cy="${round(y(last ?? 0))}"
        r="2"
        fill="${options.color}"
      />`;
  }
  return html`<svg
    class="spark"
    role="img"
    aria-label="${words}"
    width="${width}"
    height="${height}"
    viewBox="0 0 ${width} ${height}"
    data-values="${values.join(',')}"
  >
    <title>${words}</title>
    ${marks}
  </svg>`;
}

function axisTime(ms: number): string {
  return new Date(ms).toISOString().slice(5, 16).replace('T', ' ');
}

/**
 * A run-by-run chart: one dot per run, evenly spaced in the order the runs started
 * (irregular schedules and manual runs would bunch up on a time axis), joined by a
 * line, the y axis from 0 to the highest value, the first and last start times (UTC)
 * under the x axis and each dot's label as its tooltip.
 */
export function timeChart(
  points: readonly ChartPoint[],
  options: { title: string; unit: string; color: string; width?: number; height?: number },
): SafeHtml {
  const width = options.width ?? 640;
  const height = options.height ?? 180;
  const left = 52;
  const right = 12;
  const top = 24;
  const bottom = 28;
  const max = Math.max(0, ...points.map((p) => p.y));
  const words =
    points.length === 0
      ? `${options.title}: no runs yet`
      : `${options.title}, ${points.length} run${points.length === 1 ? '' : 's'}: highest ${formatFigure(max)} ${options.unit}, last ${formatFigure(points.at(-1)?.y ?? 0)} ${options.unit}`;
  const x0 = points[0]?.x ?? 0;
  const x1 = points.at(-1)?.x ?? 0;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const last = points.length - 1;
  const x = (i: number) => (last <= 0 ? left + plotW / 2 : left + (i / last) * plotW);
  const y = (v: number) => (max === 0 ? top + plotH : top + plotH - (v / max) * plotH);
  const ticks = max === 0 ? [0] : [0, max / 2, max];
  const line = points.map((p, i) => `${round(x(i))},${round(y(p.y))}`).join(' ');
  return html`<figure class="chart">
    <figcaption>${options.title}</figcaption>
    <svg
      role="img"
      aria-label="${words}"
      width="${width}"
      height="${height}"
      viewBox="0 0 ${width} ${height}"
      data-values="${points.map((p) => formatFigure(p.y)).join(',')}"
    >
      <title>${words}</title>
      ${ticks.map(
        (v) =>
          html`<line
              x1="${left}"
              x2="${width - right}"
              y1="${round(y(v))}"
              y2="${round(y(v))}"
              stroke="#e3e6ea"
            />
            <text x="${left - 6}" y="${round(y(v) + 4)}" text-anchor="end" font-size="11" fill="#6b7480">
              ${formatFigure(v)}
            </text>`,
      )}
      <text x="4" y="12" font-size="11" fill="#6b7480">${options.unit}</text>
      ${
        points.length === 0
          ? html`<text x="${left + plotW / 2}" y="${top + plotH / 2}" text-anchor="middle" fill="#6b7480">
              no runs yet
            </text>`
          : html`<polyline points="${line}" fill="none" stroke="${options.color}" stroke-width="1.5" />
              ${points.map(
                (p, i) =>
                  html`<circle cx="${round(x(i))}" cy="${round(y(p.y))}" r="3" fill="${options.color}">
                    <title>${p.label}</title>
                  </circle>`,
              )}
              <text x="${left}" y="${height - 8}" font-size="11" fill="#6b7480">${axisTime(x0)}</text>
              <text x="${width - right}" y="${height - 8}" font-size="11" text-anchor="end" fill="#6b7480">
                ${axisTime(x1)} UTC
              </text>`
      }
    </svg>
  </figure>`;
}
