/**
 * `rowbridge check`: a connection doctor, like a connector's "check connection". Each
 * step says what it found; the first one that cannot go on ends the list, so the user
 * sees the one thing to fix (a wrong prefix, a missing worksheet, a mapping error).
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { ApiError, ConfigError } from '../../ground/errors.ts';
import type { WorksheetStructure } from '../../api/types.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { MappingError } from '../mapping/mapping-error.ts';
import { validateMapping } from '../mapping/validate-mapping.ts';
import { structureDrift } from '../prepare/schema-drift.ts';
import type { StructureSnapshot } from '../prepare/schema-drift.ts';

export interface CheckStep {
  /** What was checked: `platform`, `app`, `target worksheet`, `mapping`, ... */
  name: string;
  ok: boolean;
  detail: string;
}

/** What the checks are told about the connection, to explain a failure (never a secret). */
export interface ConnectionFacts {
  apiUrl: string;
  /** `app key + sign`, `personal token` or `OAuth`. */
  method: string;
  /** The headers sent, e.g. `HAP-Appkey, HAP-Sign`. */
  headers: string;
  headerPrefix: string;
  timeZone: string;
}

/** System fields a pull job may map besides the worksheet's fields (worksheet-source.ts). */
const SYSTEM_COLUMNS = new Set([
  'rowid',
  '_id',
  '_createdAt',
  '_updatedAt',
  '_createdBy',
  '_updatedBy',
  '_owner',
  '_autoId',
]);

const AUTH_CODES = new Set([10101, 10102, 10105, 10106, 600100, 600101, 600102, 600112]);

function hostOf(apiUrl: string): string {
  try {
    const url = new URL(apiUrl);
    return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return apiUrl;
  }
}

function explain(err: unknown, facts: ConnectionFacts): string {
  if (err instanceof ApiError) {
    const code = err.errorCode === undefined ? '' : ` (code ${err.errorCode})`;
    if (err.errorCode === undefined && err.httpStatus === undefined) {
      return `cannot reach ${hostOf(facts.apiUrl)} (ROWBRIDGE_API_URL=${facts.apiUrl}): ${err.message}`;
    }
    if (
      err.category === 'auth' ||
      (err.errorCode !== undefined && AUTH_CODES.has(err.errorCode)) ||
      err.httpStatus === 401
    ) {
      return (
        `authentication refused${code}: ${err.message}. Sent ${facts.method} as ${facts.headers} ` +
        `(ROWBRIDGE_HEADER_PREFIX=${facts.headerPrefix}); the public platform uses the prefix HAP-`
      );
    }
    return `${err.message}${code}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Names the worksheets of an app answer (`sections[].items` and child sections, type 0). */
export function worksheetsOfApp(app: unknown): Array<{ id: string; name: string; alias: string }> {
  const out: Array<{ id: string; name: string; alias: string }> = [];
  const walk = (sections: unknown) => {
    if (!Array.isArray(sections)) return;
    for (const section of sections as Array<Record<string, unknown>>) {
      for (const item of Array.isArray(section.items)
        ? (section.items as Array<Record<string, unknown>>)
        : []) {
        // platform-shapes §4 [C]: type 0 worksheet, 1 custom page, 2 sub-group.
        if (Number(item.type) === 0 && typeof item.id === 'string') {
          out.push({ id: item.id, name: stringOf(item.name), alias: stringOf(item.alias) });
        }
      }
      walk(section.childSections);
    }
  };
  if (typeof app === 'object' && app !== null) walk((app as Record<string, unknown>).sections);
  return out;
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function label(ws: { name: string; alias: string }): string {
  return ws.alias === '' ? ws.name : `${ws.name} (${ws.alias})`;
}

/** Connection and app: reachable, authenticated, its worksheets. */
export async function checkPlatform(
  client: PlatformClient,
  facts: ConnectionFacts,
): Promise<{
  steps: CheckStep[];
  worksheets: Array<{ id: string; name: string; alias: string }> | undefined;
}> {
  const steps: CheckStep[] = [
    {
      name: 'settings',
      ok: true,
      detail: `${facts.apiUrl}, ${facts.method} (${facts.headers}), time zone ${facts.timeZone}`,
    },
  ];
  let app: unknown;
  try {
    app = await client.apps.get();
  } catch (err) {
    steps.push({ name: 'platform', ok: false, detail: explain(err, facts) });
    return { steps, worksheets: undefined };
  }
  steps.push({ name: 'platform', ok: true, detail: `reached ${hostOf(facts.apiUrl)} and authenticated` });
  let worksheets = worksheetsOfApp(app);
  if (worksheets.length === 0) {
    // An app answer without worksheet items (an older form): ask the worksheet list.
    const list = await client.worksheets.list().catch(() => []);
    worksheets = (Array.isArray(list) ? (list as unknown[]) : [])
      .filter((w): w is Record<string, unknown> => typeof w === 'object' && w !== null)
      .map((w) => ({ id: stringOf(w.id), name: stringOf(w.name), alias: stringOf(w.alias) }))
      .filter((w) => w.id !== '');
  }
  const name = typeof app === 'object' && app !== null ? stringOf((app as Record<string, unknown>).name) : '';
  steps.push({
    name: 'app',
    ok: true,
    detail: `${name || 'the application'}: ${worksheets.length} worksheet${worksheets.length === 1 ? '' : 's'}${
      worksheets.length === 0 ? '' : ` (${worksheets.map(label).join(', ')})`
    }`,
  });
  return { steps, worksheets };
}

async function readStructure(
  client: PlatformClient,
  ref: string,
  worksheets: ReadonlyArray<{ id: string; name: string; alias: string }> | undefined,
  facts: ConnectionFacts,
): Promise<WorksheetStructure | string> {
  try {
    return await client.worksheets.get(ref);
  } catch (err) {
    const known =
      worksheets === undefined || worksheets.length === 0
        ? ''
        : `; the app has ${worksheets.map(label).join(', ')}`;
    if (err instanceof ApiError && err.category === 'not-found')
      return `no worksheet "${ref}" in this app${known}`;
    return `worksheet "${ref}": ${explain(err, facts)}${known}`;
  }
}

/** A job: its worksheet, its mapping against the structure, one page of rows, the zone. */
export async function checkJob(
  spec: JobSpec,
  client: PlatformClient,
  facts: ConnectionFacts,
  worksheets: ReadonlyArray<{ id: string; name: string; alias: string }> | undefined,
  file?: string,
  /** The structure of the job's last successful run, when it can be read (Redis). */
  lastGood?: () => Promise<StructureSnapshot | string | undefined>,
): Promise<CheckStep[]> {
  const steps: CheckStep[] = [];
  const pull = spec.target === undefined;
  const ref =
    spec.target?.worksheet ?? (spec.source.type === 'worksheet' ? spec.source.worksheet : undefined);
  if (ref === undefined) {
    return [
      {
        name: 'job',
        ok: false,
        detail: `job ${spec.name} has neither a target worksheet nor a worksheet source`,
      },
    ];
  }
  const role = pull ? 'source worksheet' : 'target worksheet';
  const structure = await readStructure(client, ref, worksheets, facts);
  if (typeof structure === 'string') return [{ name: role, ok: false, detail: structure }];
  steps.push({
    name: role,
    ok: true,
    detail: `${structure.name} (${structure.id}): ${structure.fields.length} fields`,
  });

  if (spec.target !== undefined && lastGood !== undefined) {
    const before = await lastGood();
    if (typeof before === 'string')
      steps.push({ name: 'drift', ok: true, detail: `not compared: ${before}` });
    else if (before === undefined)
      steps.push({ name: 'drift', ok: true, detail: 'no successful run yet to compare with' });
    else {
      const drift = structureDrift(before, structure, spec.mappings, spec.target.mode !== 'update');
      steps.push(
        drift.length === 0
          ? {
              name: 'drift',
              ok: true,
              detail: 'nothing the mapping uses changed since the last successful run',
            }
          : { name: 'drift', ok: false, detail: drift.join('; ') },
      );
      if (drift.length > 0) return steps;
    }
  }
  if (spec.target !== undefined) {
    try {
      const plan = validateMapping(spec.mappings, structure, {
        mode: spec.target.mode === 'two-way' ? 'upsert' : spec.target.mode,
        key: spec.target.key,
        relationKeys: spec.target.mode === 'two-way',
        jobFile: file,
        targetTimezone: facts.timeZone,
      });
      const key = spec.target.key === undefined ? '' : ` by ${[spec.target.key].flat().join(' + ')}`;
      steps.push({
        name: 'mapping',
        ok: true,
        detail: `${plan.fields.length} fields mapped, ${spec.target.mode}${key}`,
      });
    } catch (err) {
      if (!(err instanceof MappingError)) throw err;
      const problems = err.problems.map((p) => `${p.target}: ${p.message}`).join('; ');
      steps.push({ name: 'mapping', ok: false, detail: problems });
      return steps;
    }
  } else {
    const known = new Set(SYSTEM_COLUMNS);
    for (const f of structure.fields) {
      known.add(f.id);
      if (f.alias !== undefined && f.alias !== '') known.add(f.alias);
    }
    const missing = spec.mappings.filter((m) => m.from !== undefined && !known.has(m.from));
    steps.push(
      missing.length === 0
        ? { name: 'mapping', ok: true, detail: `${spec.mappings.length} columns from ${structure.name}` }
        : {
            name: 'mapping',
            ok: false,
            detail: missing
              .map((m) => `${m.target}: no field "${m.from}" in worksheet ${structure.name}`)
              .join('; '),
          },
    );
    if (missing.length > 0) return steps;
  }

  try {
    const page = await client.rows.list(structure.id, {
      pageSize: 10,
      pageIndex: 1,
      includeTotalCount: true,
      includeSystemFields: true,
    });
    const total = page.total === undefined ? '' : ` of ${page.total}`;
    steps.push({
      name: 'rows',
      ok: true,
      detail: `read one page: ${page.rows.length} row${page.rows.length === 1 ? '' : 's'}${total}`,
    });
  } catch (err) {
    steps.push({ name: 'rows', ok: false, detail: explain(err, facts) });
    return steps;
  }
  steps.push({
    name: 'time zone',
    ok: true,
    detail: `${facts.timeZone} (ROWBRIDGE_PLATFORM_TIMEZONE): platform timestamps are read, and dates written, in it`,
  });
  return steps;
}

/** A setting problem as a failed step (nothing was sent). */
export function settingsFailure(err: unknown): CheckStep {
  return {
    name: 'settings',
    ok: false,
    detail: err instanceof ConfigError || err instanceof Error ? err.message : String(err),
  };
}
