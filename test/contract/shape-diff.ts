import type { FixtureField } from './fixture-world.ts';

/**
 * Differences between a platform example's answer and an emulator's answer: keys,
 * nesting, JSON types and value formats (not sample values). Every element of an array is
 * compared; rows are matched by id and every field cell is held to its field's kind;
 * system fields must be absent unless asked for; contacts must be masked; structure
 * fields must carry the example's type names and attributes.
 */
export interface Expectation {
  answer: unknown;
  /** The fields of the example's worksheet, to know each cell's kind. */
  fields: readonly FixtureField[];
  /** Whether the request asked for system fields. */
  systemFields: boolean;
  /** Row values keyed by field id (true), by alias (false), or either (undefined). */
  idKeys: boolean | undefined;
  /** The answer's `data` is one row (GET row). */
  singleRow: boolean;
  /** Arrays the examples' world leaves empty, with why (a limit of the world, not of the emulator). */
  mayBeEmpty: Readonly<Record<string, string>>;
}

const SYSTEM_KEY = /^(_|autoid$)/;

/** Format classes of strings the examples pin. */
function formatOf(value: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return 'uuid';
  // Special account ids stand where a member's UUID stands (platform-shapes §3 [C]).
  if (/^user-(api|undefined|self|sub|workflow)$/.test(value)) return 'uuid';
  if (/^[0-9a-f]{24}$/i.test(value)) return 'hex24';
  if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return 'wall-clock';
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) return 'iso';
  return 'text';
}

const digits = (s: string) => s.replace(/\d/g, '9');
const decimals = (s: string) => (s.includes('.') ? s.split('.')[1]!.length : 0);

/** Checks of a scalar cell by its field's kind, beyond its JSON type. */
function kindDiff(type: string, expected: unknown, actual: unknown): string | undefined {
  if (typeof expected !== 'string' || typeof actual !== 'string') return undefined;
  switch (type) {
    case 'Number':
    case 'Currency':
      return /^-?\d+(\.\d+)?$/.test(actual) && decimals(actual) === decimals(expected)
        ? undefined
        : `a number string like ${JSON.stringify(expected)}`;
    case 'Checkbox':
      return actual === '1' || actual === '0' ? undefined : '"1" or "0"';
    case 'Rating':
      return /^\d+$/.test(actual) ? undefined : 'a digit string';
    case 'AutoNumber':
    case 'Date':
    case 'DateTime':
    case 'Time':
      return digits(actual) === digits(expected) ? undefined : `the form ${digits(expected)}`;
    case 'Region':
      return undefined;
    default:
      return undefined;
  }
}

export function answerDiffs(exp: Expectation, actual: unknown): string[] {
  const diffs: string[] = [];
  const fieldOf = (key: string) => exp.fields.find((f) => f.id === key || f.alias === key);

  function walk(expected: unknown, got: unknown, at: string, kind?: string): void {
    if (expected === null || expected === undefined) return;
    if (Array.isArray(expected)) {
      if (!Array.isArray(got)) return void diffs.push(`${at}: expected an array, got ${show(got)}`);
      if (expected.length === 0) return;
      if (got.length === 0) {
        if (exp.mayBeEmpty[at] === undefined) diffs.push(`${at}: empty where the example has elements`);
        return;
      }
      if (at.endsWith('.rows') && typeof expected[0] === 'object' && 'id' in (expected[0] as object))
        return rows(expected as Array<Record<string, unknown>>, got, at);
      got.forEach((item, i) => walk(expected[Math.min(i, expected.length - 1)], item, `${at}[${i}]`, kind));
      return;
    }
    if (typeof expected === 'object') {
      if (typeof got !== 'object' || got === null || Array.isArray(got))
        return void diffs.push(`${at}: expected an object, got ${show(got)}`);
      if (exp.singleRow && at === 'answer.data')
        return rows([expected as Record<string, unknown>], [got], at);
      // Maps keyed by the request's own field ids (pivot cells, summary): data, not shape.
      if (/\.(pivot\[\d+\]\.(rows|columns|values)|summary)$/.test(at)) return;
      const have = got as Record<string, unknown>;
      for (const [key, value] of Object.entries(expected as Record<string, unknown>)) {
        // The list example writes `id` for `accountId` in user objects: synonyms.
        const name = key === 'id' && !('id' in have) && 'accountId' in have ? 'accountId' : key;
        if (!(name in have)) diffs.push(`${at}.${key}: missing (has ${Object.keys(have).join(', ')})`);
        else walk(value, have[name], `${at}.${key}`, kind);
      }
      extraChecks(expected as Record<string, unknown>, have, at);
      return;
    }
    if (typeof expected !== typeof got)
      return void diffs.push(`${at}: expected a ${typeof expected}, got ${show(got)}`);
    if (typeof expected === 'string') {
      const e = formatOf(expected);
      if (e !== 'text' && e !== formatOf(got as string))
        return void diffs.push(`${at}: expected the ${e} form, got ${show(got)}`);
      if (expected.includes('｜') && expected.split('\n')[0] !== (got as string).split('\n')[0])
        return void diffs.push(
          `${at}: expected the header line ${show(expected.split('\n')[0])}, got ${show(got)}`,
        );
    }
    const wrong = kind === undefined ? undefined : kindDiff(kind, expected, got);
    if (wrong !== undefined) diffs.push(`${at}: a ${kind} cell must be ${wrong}, got ${show(got)}`);
  }

  function extraChecks(expected: Record<string, unknown>, got: Record<string, unknown>, at: string): void {
    if ('email' in expected && 'mobile' in expected) {
      if (!/\*{3,4}@/.test(String(got['email'])))
        diffs.push(`${at}.email: not masked: ${show(got['email'])}`);
      if (!/^\d{3}\*+\d{4}$/.test(String(got['mobile'])))
        diffs.push(`${at}.mobile: not masked: ${show(got['mobile'])}`);
    }
    if (/\.fields\[\d+\]$/.test(at) && typeof expected['type'] === 'string') {
      for (const key of ['type', 'subType', 'max', 'relation', 'sourceField', 'dataSource', 'precision']) {
        if (key in expected && JSON.stringify(expected[key]) !== JSON.stringify(got[key]))
          diffs.push(`${at}.${key}: expected ${show(expected[key])}, got ${show(got[key])}`);
      }
    }
    if ('rows' in expected) {
      // A row list's data is {rows, total?}: no paging echo, no total unless asked.
      const extra = Object.keys(got).filter((k) => !(k in expected));
      if (extra.length > 0) diffs.push(`${at}: keys the platform does not send: ${extra.join(', ')}`);
    }
  }

  function rows(expected: Array<Record<string, unknown>>, got: unknown[], at: string): void {
    got.forEach((row, i) => {
      const keys = Object.keys(row as object).filter((k) => SYSTEM_KEY.test(k));
      if (!exp.systemFields && keys.length > 0)
        diffs.push(`${at}[${i}]: system fields not asked for: ${keys.join(', ')}`);
    });
    for (const want of expected) {
      const i = got.findIndex((r) => (r as Record<string, unknown>)['id'] === want['id']);
      if (i < 0) {
        diffs.push(`${at}: row ${String(want['id'])} missing (got ${got.length} rows)`);
        continue;
      }
      const have = got[i] as Record<string, unknown>;
      for (const [key, value] of Object.entries(want)) {
        const field = key === 'id' || SYSTEM_KEY.test(key) ? undefined : fieldOf(key);
        if (field === undefined) {
          if (!(key in have)) diffs.push(`${at}[${i}].${key}: missing (has ${Object.keys(have).join(', ')})`);
          else walk(value, have[key], `${at}[${i}].${key}`);
          continue;
        }
        const forms =
          exp.idKeys === undefined ? [field.id, field.alias] : [exp.idKeys ? field.id : field.alias];
        const name = forms.find((k) => k in have);
        if (name === undefined)
          diffs.push(`${at}[${i}]: no cell keyed ${forms.join(' or ')} (${field.type})`);
        else walk(value, have[name], `${at}[${i}].${key}`, field.type);
      }
    }
  }

  walk(exp.answer, actual, 'answer');
  return diffs;
}

function show(value: unknown): string {
  return JSON.stringify(value)?.slice(0, 80) ?? 'undefined';
}
