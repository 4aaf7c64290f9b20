import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';
import type { Fixture } from './fixture-world.ts';
import {
  APP_KEY,
  HARBOR,
  loadFixtures,
  PROJECT_FIELDS,
  PROJECTS_ID,
  QUAY,
  SIGN,
  WORLD_CLOCK,
  worldSeed,
} from './fixture-world.ts';
import { answerDiffs } from './shape-diff.ts';
import type { Expectation } from './shape-diff.ts';

/**
 * The emulator, in its default dialect, answers each example of
 * shared/spec/platform-examples/ as the platform does: each example's own request (path,
 * query and body, adapted only in the field ids the emulator makes) is sent to a fresh
 * emulator holding the examples' world (fixture-world.ts), and the answer is held to the
 * example's `answer` and to every variant: every element of every array, every field
 * cell by its kind (shape-diff.ts). A variant is either answered by the request it names
 * or listed in NOT_SERVED with the reason; a new variant fails until it is one of them.
 */

/** Path parameters of each operation, in the examples' world. */
const PARAMS: Record<string, string> = { worksheet_id: PROJECTS_ID, row_id: HARBOR, field: 'customer' };
const ROW_PARAMS: Record<string, string> = { 'row-delete.json': QUAY };
/** Examples that create Projects rows start with none (its title is unique). */
const CREATES = new Set(['row-create.json', 'rows-batch-create.json']);

/** Variants that are older or contradictory spellings the client accepts and the emulator does not serve. */
const NOT_SERVED: Record<string, string> = {
  'app-get.json#0': "the export's example: sectionId keys and createType; the schema's form is served",
  'row-create.json#0': 'the export\'s placeholder answer (id "")',
  'row-get.json#0': 'the _createAt/_createBy misspellings; the schema names are served',
  'row-relations.json#0': 'total as a string; an integer is served',
  'rows-batch-create.json#0': "data.rows contradicts the schema's rowIds",
  'rows-batch-update.json#0': "the older export's succeededRowIds",
  'rows-list.json#2': 'total as a string under "total\\t"; an integer under total is served',
  'rows-list.json#4': "the older export's rowid and unprefixed system keys",
  'users-lookup.json#0': "the export's id/name keys; accountId/fullname are served",
  'worksheet-get.json#0': 'option index/isDeleted as strings; integer and boolean are served',
  'worksheet-get.json#1': 'a V2 leftover (type codes, attribute, size)',
  'worksheet-get.json#2': 'the code/msg failure spelling; error_code/error_msg are served',
};

/** Arrays the world leaves empty: a limit of the seed, not of the emulator. */
const MAY_BE_EMPTY: Record<string, string> = {
  'answer.data.sections[0].childSections': 'the seed format has no sub-groups',
};

/** How a served variant is asked for: the example's request changed by `adapt`, or with a bad sign. */
const VARIANT_REQUESTS: Record<string, { adapt?: (r: Req) => Req; failure?: true; anyKeyForm?: true }> = {
  'departments-lookup.json#0': {},
  'regions.json#0': { adapt: (r) => ({ ...r, query: { id: '310000' } }) },
  'row-create.json#1': { failure: true },
  'row-delete.json#0': {},
  'row-get.json#1': { adapt: (r) => ({ ...r, query: {} }) },
  'row-get.json#2': { anyKeyForm: true },
  'row-update.json#0': {},
  'row-update.json#1': { failure: true },
  'rows-batch-delete.json#0': {},
  'rows-list.json#0': { adapt: (r) => ({ ...r, body: { ...bodyOf(r), useFieldIdAsKey: true } }) },
  'rows-list.json#1': {
    adapt: (r) => {
      const { includeTotalCount: _t, includeSystemFields: _s, ...rest } = bodyOf(r);
      return { ...r, body: rest };
    },
  },
  'rows-list.json#3': { anyKeyForm: true },
  'rows-pivot.json#0': { adapt: (r) => ({ ...r, body: { values: bodyOf(r)['values'] } }) },
  'worksheets-list.json#0': { adapt: (r) => ({ ...r, body: { ...bodyOf(r), responseFormat: 'md' } }) },
  'worksheets-list.json#1': { failure: true },
};

interface Req {
  method: string;
  path: string;
  query: Record<string, unknown>;
  body: unknown;
}

function bodyOf(r: Req): Record<string, unknown> {
  return r.body as Record<string, unknown>;
}

/** Replaces every string found in `map` (keys and values), deeply. */
function mapIds(value: unknown, map: Map<string, string>): unknown {
  if (typeof value === 'string') return map.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => mapIds(v, map));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [map.get(k) ?? k, mapIds(v, map)]));
  return value;
}

describe("the emulator answers each platform example's request in the platform's shapes", () => {
  let emulator: EmulatorHandle | undefined;
  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
  });

  /** Sends a request to a fresh world; answers come back with the emulator's field ids turned into the example's. */
  async function exchange(file: string, req: Req, sign = SIGN): Promise<unknown> {
    emulator = await startEmulator({ seed: worldSeed(!CREATES.has(file)), now: () => WORLD_CLOCK });
    const structure = emulator.state.worksheet(PROJECTS_ID) as {
      fields: Array<{ id: string; alias: string }>;
    };
    const toEmulator = new Map<string, string>();
    for (const f of PROJECT_FIELDS) {
      const mine = structure.fields.find((m) => m.alias === f.alias);
      if (mine !== undefined) toEmulator.set(f.id, mine.id);
    }
    const fromEmulator = new Map([...toEmulator].map(([a, b]) => [b, a]));
    const url = new URL(`${emulator.url}${req.path}`);
    for (const [k, v] of Object.entries(mapIds(req.query, toEmulator) as Record<string, unknown>))
      url.searchParams.set(k, String(v));
    const res = await fetch(url, {
      method: req.method,
      headers: { 'HAP-Appkey': APP_KEY, 'HAP-Sign': sign, 'content-type': 'application/json' },
      ...(req.body === undefined ? {} : { body: JSON.stringify(mapIds(req.body, toEmulator)) }),
    });
    return mapIds(await res.json(), fromEmulator);
  }

  function requestOf(file: string, fixture: Fixture): Req {
    const rowId = ROW_PARAMS[file];
    const params: Record<string, string> = { ...PARAMS, ...(rowId === undefined ? {} : { row_id: rowId }) };
    return {
      method: fixture.method,
      path: fixture.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? `{${name}}`),
      query: fixture.request.query ?? {},
      body: fixture.request.body,
    };
  }

  for (const { file, fixture } of loadFixtures()) {
    const expectation = (answer: unknown, req: Req, anyKeyForm = false): Expectation => ({
      answer,
      fields: PROJECT_FIELDS,
      systemFields:
        bodyOf({ ...req, body: req.body ?? {} })['includeSystemFields'] === true ||
        req.query['includeSystemFields'] === true ||
        req.query['isReturnSystemFields'] === true,
      // GET row has no useFieldIdAsKey and keys values by field id (platform-shapes §6 [C]).
      idKeys: anyKeyForm
        ? undefined
        : fixture.path.endsWith('/rows/{row_id}') ||
          bodyOf({ ...req, body: req.body ?? {} })['useFieldIdAsKey'] === true,
      singleRow: fixture.method === 'GET' && fixture.path.endsWith('/rows/{row_id}'),
      mayBeEmpty: MAY_BE_EMPTY,
    });

    it(`${file}: ${fixture.method} ${fixture.path} with the example's own request`, async () => {
      const req = requestOf(file, fixture);
      const answer = await exchange(file, req);
      expect(answerDiffs(expectation(fixture.answer, req), answer)).toEqual([]);
    });

    (fixture.variants ?? []).forEach((variant, i) => {
      const key = `${file}#${i}`;
      it(`${key}: ${variant.why.slice(0, 90)}`, async () => {
        const served = VARIANT_REQUESTS[key];
        if (served === undefined) {
          expect(
            NOT_SERVED[key],
            `${key} is neither served (VARIANT_REQUESTS) nor listed in NOT_SERVED with a reason`,
          ).toBeDefined();
          return;
        }
        const base = requestOf(file, fixture);
        const req = served.adapt?.(base) ?? base;
        const answer = await exchange(file, req, served.failure === true ? 'not-the-sign' : SIGN);
        expect(answerDiffs(expectation(variant.answer, req, served.anyKeyForm), answer)).toEqual([]);
      });
    });
  }
});
