import { APP_ITEM_TYPES } from './parse-app-info.ts';
import type { AppInfo, AppSection } from './parse-app-info.ts';

/** A worksheet of the application, with the section that holds it. */
export interface AppWorksheet {
  id: string;
  name: string;
  alias: string;
  sectionId: string;
}

/**
 * The app's worksheets: every type-0 item of every section and, recursively, of its
 * child sections (platform-shapes §4 [C]), each once, in the order the app lists them.
 */
export function listAppWorksheets(app: Pick<AppInfo, 'sections'>): AppWorksheet[] {
  const seen = new Set<string>();
  const out: AppWorksheet[] = [];
  const walk = (section: AppSection) => {
    for (const item of section.items) {
      if (item.type !== APP_ITEM_TYPES.worksheet || seen.has(item.id)) continue;
      seen.add(item.id);
      out.push({ id: item.id, name: item.name, alias: item.alias, sectionId: section.id });
    }
    for (const child of section.childSections) walk(child);
  };
  for (const section of app.sections) walk(section);
  return out;
}
