/**
 * The settings table of docs/configuration.md, rendered from {@link SETTINGS}: the schema
 * is the one source, and test/unit/config/settings-doc.test.ts fails when the page's copy
 * differs. `node scripts/settings-doc.ts` writes it into the page.
 */
import { SETTINGS } from './settings.ts';

/** The comment lines the generated table sits between in docs/configuration.md. */
export const SETTINGS_TABLE_MARKERS = {
  start:
    '<!-- settings:start: generated from config/settings.ts by `node scripts/settings-doc.ts`; edit there -->',
  end: '<!-- settings:end -->',
} as const;

interface DocumentedSetting {
  env: string;
  description: string;
  default?: string | number | boolean;
  secret?: boolean;
}

/** Markdown would read `*KEY*`, `<token>` or a `|` as markup: escape them outside code spans. */
function escapeCell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replaceAll('\\', '\\\\')
            .replaceAll('|', '\\|')
            .replaceAll('*', '\\*')
            .replaceAll('<', '&lt;')
            .replace(/(?<!\w)_|_(?!\w)/g, '\\_'),
    )
    .join('');
}

function defaultCell(value: string | number | boolean | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'boolean') return value ? '`1`' : '`0`';
  return `\`${value}\``;
}

/** Every setting as one markdown table row: variable, default, secret, description. */
export function renderSettingsTable(settings: Record<string, DocumentedSetting> = SETTINGS): string {
  const rows = Object.values(settings).map(
    (s) =>
      `| \`${s.env}\` | ${defaultCell(s.default)} | ${s.secret === true ? 'yes' : ''} | ${escapeCell(s.description)} |`,
  );
  return ['| variable | default | secret | description |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
