/**
 * The platform lookups a run's mapping needs: members and departments by exact name,
 * related rows by the related worksheet's key. Each distinct name is asked once per run,
 * misses included (the platform has no list-all lookup: `/v3/users/lookup` needs an
 * exact `name`, platform-shapes §9 [C]), so a name on 10,000 rows costs one request.
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { ConfigError } from '../../ground/errors.ts';
import { iterateRows } from '../../api/rows/iterate-rows.ts';
import { createRowNormaliser } from '../../api/rows/normalise-row.ts';
import type { Filter, WireRow, WorksheetStructure } from '../../api/types.ts';
import { createZoneClock } from '../../api/zone-clock.ts';
import { createReferenceCache } from '../mapping/reference-cache.ts';
import { anyOf, createRelatedKey } from './related-key.ts';
import type { ReferenceLookups } from '../mapping/resolve-references.ts';
import type { NormalisedRow } from '../../api/types.ts';

export { anyOf };

const LOOKUP_CHUNK = 100;

export function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** The one id among entries named exactly `name`; two different people of that name match nobody. */
function onlyMatch(entries: ReadonlyArray<{ id: string; name: string }>, name: string): string | undefined {
  const ids = new Set(entries.filter((e) => e.name === name && e.id !== '').map((e) => e.id));
  return ids.size === 1 ? [...ids][0] : undefined;
}

/** Reads rows of any worksheet of the app, keyed by field id and alias (structures read once). */
export function createRowReader(client: PlatformClient) {
  const structures = new Map<string, Promise<WorksheetStructure>>();
  const normalisers = new Map<string, (row: WireRow) => NormalisedRow>();
  const structureOf = (worksheet: string): Promise<WorksheetStructure> => {
    let found = structures.get(worksheet);
    if (found === undefined) {
      found = client.worksheets.get(worksheet);
      structures.set(worksheet, found);
      found.catch(() => structures.delete(worksheet));
    }
    return found;
  };
  return {
    structureOf,
    /** Seeds the reader with a structure already read (the target's). */
    know(structure: WorksheetStructure, alsoAs?: string): void {
      structures.set(structure.id, Promise.resolve(structure));
      if (alsoAs !== undefined) structures.set(alsoAs, Promise.resolve(structure));
    },
    async list(worksheet: string, filter: Filter, fields?: string[]): Promise<NormalisedRow[]> {
      const structure = await structureOf(worksheet);
      let normalise = normalisers.get(structure.id);
      if (normalise === undefined) {
        normalise = createRowNormaliser({ structure, timeZone: client.organisation.timeZone });
        normalisers.set(structure.id, normalise);
      }
      const out: NormalisedRow[] = [];
      for await (const row of iterateRows((body) => client.rows.list(structure.id, body), {
        filter,
        ...(fields === undefined ? {} : { fields }),
      })) {
        out.push(normalise(row));
      }
      return out;
    },
  };
}

export type RowReader = ReturnType<typeof createRowReader>;

/** Lookups for one run; keep the result for the whole run so each name is asked once. */
export function createReferenceLookups(client: PlatformClient, reader: RowReader): ReferenceLookups {
  const byName = new Map<string, Promise<string | undefined>>();

  function ask(kind: 'users' | 'departments', name: string): Promise<string | undefined> {
    const memo = `${kind}\u0000${name}`;
    let found = byName.get(memo);
    if (found === undefined) {
      // The lookups resource sends the organisation's orgId (ROWBRIDGE_ORG_ID) itself.
      found =
        kind === 'users'
          ? client.lookups.users({ name }).then((users) =>
              onlyMatch(
                users.map((u) => ({ id: u.accountId, name: u.fullname })),
                name,
              ),
            )
          : client.lookups.departments({ name }).then((departments) => onlyMatch(departments, name));
      byName.set(memo, found);
      // A failed request is not an answer: the next batch asks again.
      found.catch(() => byName.delete(memo));
    }
    return found;
  }

  const clock = createZoneClock(client.organisation.timeZone);
  const memberIds = async (names: readonly string[]): Promise<string[]> => [
    ...(await byNames('users', [...new Set(names.map((n) => n.trim()))])).values(),
  ];

  async function byNames(kind: 'users' | 'departments', values: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const answers = await Promise.all(values.map(async (value) => [value, await ask(kind, value)] as const));
    for (const [value, id] of answers) if (id !== undefined) found.set(value, id);
    return found;
  }

  return {
    cache: createReferenceCache(),
    async lookupMembers(by, values) {
      // validateMapping refuses `email` (masked by the platform); the table covers it.
      if (by !== 'name') return new Map();
      return byNames('users', values);
    },
    lookupDepartments: async (values) => byNames('departments', values),
    async lookupRelations(relatedWorksheet, relatedKey, values) {
      const structure = await reader.structureOf(relatedWorksheet);
      const keyField = structure.fields.find(
        (f) => f.id === relatedKey || (f.alias !== undefined && f.alias === relatedKey),
      );
      if (keyField === undefined) {
        const names = structure.fields.map((f) => (f.alias !== undefined && f.alias !== '' ? f.alias : f.id));
        throw new ConfigError(
          `relationKey "${relatedKey}" is not a field of the related worksheet ${structure.name} (${structure.id}); its fields: ${names.join(', ')}`,
        );
      }
      const key = createRelatedKey(keyField, clock, memberIds);
      const found = new Map<string, string>();
      for (const part of chunks(values, LOOKUP_CHUNK)) {
        const filter = await key.filter(part);
        if (filter === undefined) continue;
        // Several source spellings ("42", "42.0") may stand for one key.
        const wanted = new Map<string, string[]>();
        for (const value of part) {
          const canonical = key.ofSource(value);
          if (canonical !== '') wanted.set(canonical, [...(wanted.get(canonical) ?? []), value]);
        }
        for (const row of await reader.list(structure.id, filter, [keyField.id])) {
          for (const value of wanted.get(key.ofRow(row.values[keyField.id])) ?? []) found.set(value, row.id);
        }
      }
      return found;
    },
  };
}
