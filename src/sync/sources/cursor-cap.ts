/**
 * The one rule of every change cursor that must not pass an edit made while its run was
 * reading (a two-way run's cursors, a worksheet source read by key): the cursor saved is at
 * most the time, at the start of the reads, of the clock that stamps the changes (the
 * platform's for `_updatedAt`, the database's for an `updatedAtColumn`), less a margin,
 * in whole seconds. Any clock but the stamping one loses edits by as much as it runs ahead
 * of it. The margin (`ROWBRIDGE_CURSOR_MARGIN_SECONDS`) covers what that clock's reading
 * leaves out: a request's time in flight, the platform's `Date` in whole seconds, and on a
 * database a transaction that stamped its rows before the reads and commits after them
 * where the server does not show it (sql-table-scans.ts). The price is that the next run
 * reads again the changes of that margin (unchanged, they cost no write).
 */
import { readSetting } from '../../../config/settings.ts';

/** `ROWBRIDGE_CURSOR_MARGIN_SECONDS` of `env`, in milliseconds. */
export function cursorMarginMs(env: NodeJS.ProcessEnv): number {
  // The setting has a default (5): it is never undefined.
  return readSetting('cursorMarginSeconds', env)! * 1000;
}

/**
 * The latest cursor a read may save (epoch ms): the stamping clock's time at the start of
 * the reads, or this machine's `localNow` when that clock is not known, less `marginMs`,
 * rounded down to a whole second.
 */
export function cursorCap(
  clock: number | undefined,
  marginMs: number,
  localNow: number = Date.now(),
): number {
  return Math.floor(((clock ?? localNow) - marginMs) / 1000) * 1000;
}
