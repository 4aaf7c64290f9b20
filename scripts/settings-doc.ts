/**
 * Writes the settings table rendered from config/settings.ts into docs/configuration.md,
 * between its marker comments. `--check` writes nothing and exits 1 when the page's
 * table is out of date.
 *
 * Usage: node scripts/settings-doc.ts [--check]
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderSettingsTable, SETTINGS_TABLE_MARKERS } from '../config/settings-table.ts';

const page = path.resolve(import.meta.dirname, '../docs/configuration.md');
const { start, end } = SETTINGS_TABLE_MARKERS;

const text = await readFile(page, 'utf8');
const from = text.indexOf(start);
const to = text.indexOf(end);
if (from < 0 || to < from) {
  process.stderr.write(`${page}: the marker lines ${start} and ${end} are missing or out of order\n`);
  process.exit(1);
}
const updated = `${text.slice(0, from + start.length)}\n${renderSettingsTable()}\n${text.slice(to)}`;
if (process.argv.includes('--check')) {
  if (updated !== text) {
    process.stderr.write(`${page}: the settings table is out of date; run node scripts/settings-doc.ts\n`);
    process.exit(1);
  }
} else if (updated !== text) {
  await writeFile(page, updated);
  process.stdout.write(`${page}: settings table updated\n`);
}
