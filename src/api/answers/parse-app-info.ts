/**
 * `GET /v3/app` → {@link AppInfo} (platform-shapes §4, `app-get.json`): the application
 * with its sections, their items and nested child sections. The export's example keys
 * every section after the first `sectionId` instead of `id` [C]: both are read.
 */
import { AnswerShapeError, describeKeys } from './answer-shape-error.ts';
import type { AnswerRef } from './answer-shape-error.ts';
import { asRecord, firstId, readId, readLooseInteger } from './read-loose.ts';

/** Item types of an app section [C]: 0 worksheet, 1 custom page, 2 sub-group. */
export const APP_ITEM_TYPES = { worksheet: 0, customPage: 1, subGroup: 2 } as const;

/** One entry of a section's `items`. */
export interface AppItem {
  id: string;
  name: string;
  /** 0 worksheet, 1 custom page, 2 sub-group; undefined when not a number. */
  type: number | undefined;
  alias: string;
  /** 1 and 2 seen; no documented meaning [U]. */
  status?: number;
}

/** A section (or a child section) of the app. */
export interface AppSection {
  id: string;
  name: string;
  items: AppItem[];
  childSections: AppSection[];
}

/** What rowbridge reads of `GET /v3/app`. */
export interface AppInfo {
  appId: string | undefined;
  organizationId: string | undefined;
  name: string;
  sections: AppSection[];
}

const SECTION_ID_KEYS = ['id', 'sectionId'] as const;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function readItem(raw: unknown): AppItem | undefined {
  const item = asRecord(raw);
  const id = item === undefined ? undefined : readId(item.id);
  if (item === undefined || id === undefined) return undefined;
  const result: AppItem = {
    id,
    name: text(item.name),
    type: readLooseInteger(item.type),
    alias: text(item.alias),
  };
  const status = readLooseInteger(item.status);
  if (status !== undefined) result.status = status;
  return result;
}

function readSection(ref: AnswerRef, raw: unknown, where: string, depth: number): AppSection {
  const section = asRecord(raw);
  if (section === undefined) throw new AnswerShapeError(ref, `${where} is not an object`);
  const found = firstId(section, SECTION_ID_KEYS);
  if (found === undefined) {
    throw new AnswerShapeError(
      ref,
      `${where} has no id: expected "id" or "sectionId"; ${describeKeys(section)}`,
    );
  }
  // childSections is nullable [C]; a loop in it would be a server bug, not a reason to hang.
  const children = depth < 8 && Array.isArray(section.childSections) ? section.childSections : [];
  return {
    id: found.id,
    name: text(section.name),
    items: (Array.isArray(section.items) ? section.items : [])
      .map(readItem)
      .filter((item): item is AppItem => item !== undefined),
    childSections: children.map((child, at) =>
      readSection(ref, child, `${where}.childSections[${at}]`, depth + 1),
    ),
  };
}

/** Reads `data` of `GET /v3/app`; throws {@link AnswerShapeError} when `sections` is missing or a section has no id. */
export function parseAppInfo(data: unknown, ref: AnswerRef): AppInfo {
  const app = asRecord(data);
  if (app === undefined)
    throw new AnswerShapeError(ref, `expected the application object, ${describeKeys(data)}`);
  if (!Array.isArray(app.sections)) {
    throw new AnswerShapeError(ref, `"sections" is not an array; ${describeKeys(app)}`);
  }
  return {
    appId: readId(app.appId),
    organizationId: readId(app.organizationId),
    name: text(app.name),
    sections: app.sections.map((section, at) => readSection(ref, section, `sections[${at}]`, 0)),
  };
}
