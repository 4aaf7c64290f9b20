/**
 * The read phase of a two-way run and the checkpoint that closes it: the job's state
 * (links, intents, conflicts, held deletes) and its cursors are read first, then both sides
 * (read-sides.ts: whole, or what changed since the cursors), and once the run's writes are
 * all recorded {@link TwoWayRead.commit} saves the cursors it reached. A plan (`planOnly`)
 * reads the same way and saves nothing.
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { createZoneClock } from '../../api/zone-clock.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { cursorMarginMs } from '../sources/cursor-cap.ts';
import type { RedisClient } from '../state/redis-types.ts';
import type { Conflict, Intent, Link, LinkIndex, LinkStore, PendingDelete } from './link-store.ts';
import { readSides } from './read-sides.ts';
import type { MakeRecord, SidesRead } from './read-sides.ts';
import { createMatchKeyOf } from './side-record.ts';
import type { TableSide } from './table-side-types.ts';
import { createCursorStore, twoWayShape } from './two-way-cursors.ts';
import type { TwoWayField } from './two-way-fields.ts';
import type { TwoWayPlan } from './two-way-plan-types.ts';
import type { TwoWayRows } from './two-way-rows.ts';

/** What the read phase needs. */
export interface TwoWayReadDeps {
  spec: JobSpec;
  /** The settings' environment (`ROWBRIDGE_CURSOR_MARGIN_SECONDS`). */
  env: NodeJS.ProcessEnv;
  redis: RedisClient;
  prefix: string;
  store: LinkStore;
  client: PlatformClient;
  table: TableSide;
  fields: readonly TwoWayField[];
  keyTargets: readonly string[];
  updatedAtColumn: string | undefined;
  updatedClock: ZoneClock;
  record: MakeRecord;
  /** The worksheet's reads in the run's read form (two-way-rows.ts): whole, by filter, key scans. */
  worksheetRows: TwoWayRows;
}

/** The state and both sides as read, and the checkpoint to save after the writes. */
export interface TwoWayRead {
  intents: Map<string, Intent>;
  conflicts: Map<string, Conflict>;
  pendingDeletes: Map<string, PendingDelete>;
  sides: SidesRead;
  /**
   * Saves the cursors reached; call only after every write of the run is recorded.
   * `rejected`: table keys of records a side refused, read whole again next run.
   */
  commit(plan: TwoWayPlan, rejected: readonly string[]): Promise<void>;
}

/** Reads the job's state and both sides. */
export async function readTwoWay(d: TwoWayReadDeps): Promise<TwoWayRead> {
  const cursorStore = createCursorStore({ redis: d.redis, prefix: d.prefix, job: d.spec.name });
  const shape = twoWayShape(d.spec);
  const [intents, conflicts, pendingDeletes, cursors] = await Promise.all([
    d.store.intents(),
    d.store.conflicts(),
    d.store.pendingDeletes(),
    cursorStore.read(shape),
  ]);
  const whole = cursors === undefined || d.table.scans === undefined;
  const hashed = d.updatedAtColumn === undefined && d.table.scans !== undefined;
  // A run reading changes holds the links in brief, and reads whole only those it decides on.
  const links = whole
    ? indexOf(await d.store.links())
    : { ...(await d.store.linkIndex()), get: (keys: readonly string[]) => d.store.getLinks(keys) };
  const sides = await readSides({
    table: d.table,
    fields: d.fields,
    keyTargets: d.keyTargets,
    updatedAtColumn: d.updatedAtColumn,
    updatedClock: d.updatedClock,
    record: d.record,
    matchKeyOf: createMatchKeyOf({
      fields: d.fields,
      keyTargets: d.keyTargets,
      orgClock: createZoneClock(d.client.organisation.timeZone),
    }),
    readWorksheet: (filter) => d.worksheetRows.read(filter),
    scanWorksheetKeys: (fieldIds) => d.worksheetRows.scanKeys(fieldIds),
    timeZone: d.client.organisation.timeZone,
    links,
    conflicts,
    cursors,
    storedRowHashes: hashed ? (each) => cursorStore.eachRowHash(each) : undefined,
    platformTime: () => d.client.serverTime(),
    marginMs: cursorMarginMs(d.env),
  });
  return {
    intents,
    conflicts,
    pendingDeletes,
    sides,
    async commit(plan, rejected) {
      // The table records the run wrote: read whole once more, so a value the table stored
      // otherwise than written (a rounding, a trigger) is compared, whatever its update time.
      const written = plan.writes.filter((w) => Object.keys(w.toSource).length > 0).map((w) => w.link.key);
      const recheck = [...new Set([...written, ...rejected])];
      const next = {
        shape,
        worksheet: sides.next.worksheet,
        ...(sides.next.source === undefined ? {} : { source: sides.next.source }),
        recheck,
      };
      if (sides.rowHashes === undefined) return cursorStore.save(next);
      if (!('all' in sides.rowHashes)) return cursorStore.save(next, sides.rowHashes);
      const { all } = sides.rowHashes;
      const stored = await cursorStore.rowHashes();
      const set = new Map<string, string>();
      for (const [key, hash] of all) if (stored.get(key) !== hash) set.set(key, hash);
      const drop: string[] = [];
      for (const key of stored.keys()) if (!all.has(key)) drop.push(key);
      await cursorStore.save(next, { set, drop });
    },
  };
}

/** A link index over links read whole. */
function indexOf(
  all: Map<string, Link>,
): LinkIndex & { get(keys: readonly string[]): Promise<Map<string, Link>> } {
  const special = new Map([...all].filter(([, l]) => l.pending !== undefined || l.gone !== undefined));
  return {
    keys: [...all.keys()],
    rowIds: [...all.values()].map((l) => l.rowId),
    special,
    get: (keys) =>
      Promise.resolve(new Map(keys.flatMap((k) => (all.has(k) ? [[k, all.get(k)!] as const] : [])))),
  };
}
