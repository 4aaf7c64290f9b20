/**
 * docs/configuration.md's settings table is the one rendered from config/settings.ts: a
 * setting added, removed, renamed or re-described in the schema and not in the page (or
 * edited by hand in the page) fails here, naming the command that writes it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderSettingsTable, SETTINGS_TABLE_MARKERS } from '../../../config/settings-table.ts';
import { SETTINGS } from '../../../config/settings.ts';

const PAGE = path.resolve(import.meta.dirname, '../../../docs/configuration.md');
const UPDATE = 'node scripts/settings-doc.ts';

/** The lines between the page's marker comments, or undefined without both markers. */
function tableInPage(text: string): string | undefined {
  const from = text.indexOf(SETTINGS_TABLE_MARKERS.start);
  const to = text.indexOf(SETTINGS_TABLE_MARKERS.end);
  if (from < 0 || to < from) return undefined;
  return text.slice(from + SETTINGS_TABLE_MARKERS.start.length, to).trim();
}

describe('docs/configuration.md settings table', () => {
  it('is the table rendered from config/settings.ts', () => {
    const inPage = tableInPage(readFileSync(PAGE, 'utf8'));
    expect(
      inPage,
      `docs/configuration.md lacks the settings markers; add them and run ${UPDATE}`,
    ).toBeDefined();
    expect(
      inPage,
      `docs/configuration.md's settings table differs from config/settings.ts: run ${UPDATE}`,
    ).toBe(renderSettingsTable());
  });

  it('lists every variable of the schema once, secrets marked', () => {
    const rows = renderSettingsTable().split('\n').slice(2);
    expect(rows).toHaveLength(Object.keys(SETTINGS).length);
    for (const setting of Object.values(SETTINGS)) {
      const row = rows.find((r) => r.startsWith(`| \`${setting.env}\` |`));
      expect(row, setting.env).toBeDefined();
      expect(row!.split(' | ')[2] === 'yes', setting.env).toBe(
        'secret' in setting && setting.secret === true,
      );
    }
  });

  it('escapes what markdown would read as markup, outside code spans', () => {
    const table = renderSettingsTable({
      x: { env: 'X', description: 'a | b, *KEY*, <token>, `a|*b*`, *_URL' },
    });
    expect(table.split('\n')[2]).toBe('| `X` |  |  | a \\| b, \\*KEY\\*, &lt;token>, `a|*b*`, \\*\\_URL |');
  });
});
