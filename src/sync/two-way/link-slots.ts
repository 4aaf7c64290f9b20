/**
 * The links of a run reading changes, held in brief while both sides' keys are scanned
 * (read-sides.ts). A quiet run over many linked records holds, per link, its table key and
 * row id (read from the link index), a slot number for each, a byte of flags and a 32-bit
 * hash of each side's match key: no object and no match-key string per record.
 *
 * The hashes are what lets a new record be matched against the records left out of the
 * plan: a quiet record whose hash equals that of a new record's match key is read whole,
 * and the planner compares the keys themselves. Two different keys with one hash cost a
 * record read, never a wrong match.
 *
 * A table without `updatedAtColumn` is read by row hash (16 hex digits, sql-table-scans.ts):
 * the stored hash of a linked record is held here too, as two 32-bit halves.
 */
import type { LinkIndex } from './link-store.ts';

const IN_SOURCE = 1;
const IN_ROWS = 2;
const QUIET_SOURCE = 4;
const QUIET_ROWS = 8;
const HAS_HASH = 16;
const HASH_FOUND = 32;
const HEX16 = /^[0-9a-f]{16}$/;

/** The side a record is on. */
export type Side = 'source' | 'worksheet';

/** Links by slot: 0 ≤ slot < size, in the link index's order. */
export interface LinkSlots {
  readonly size: number;
  key(slot: number): string;
  rowId(slot: number): string;
  /** Whether a table key or a row id is linked. */
  linkedKey(key: string): boolean;
  linkedRow(rowId: string): boolean;
  /** A key scan found the record with this match key: false when it is not linked. */
  see(side: Side, id: string, matchKey: string): boolean;
  /** Whether a key scan found the slot's record on `side`. */
  seen(slot: number, side: Side): boolean;
  /** Leaves the slot's record on `side` out of the plan. */
  setQuiet(slot: number, side: Side): void;
  isQuiet(slot: number, side: Side): boolean;
  /** Slots with a quiet record whose match key may be one of `matchKeys` ('' is never looked for). */
  quietMatching(matchKeys: Iterable<string>): number[];
  /** Takes a table record's stored row hash. */
  storeRowHash(key: string, hash: string): void;
  /** Whether a scanned record's row hash differs from the stored one (or none is stored). */
  rowHashChanged(key: string, hash: string): boolean;
  /** Keys of the stored row hashes no scanned record asked about: records gone from the table. */
  unfoundRowHashes(): string[];
}

/**
 * Slots over the link index's keys and row ids. It takes the arrays over without copying
 * them, and leaves each link in them once.
 */
export function createLinkSlots(index: Pick<LinkIndex, 'keys' | 'rowIds'>): LinkSlots {
  const { keys, rowIds } = index;
  const slotOfKey = new Map<string, number>();
  const slotOfRow = new Map<string, number>();
  let size = 0;
  for (let i = 0; i < keys.length; i++) {
    if (slotOfKey.has(keys[i]!)) continue;
    keys[size] = keys[i]!;
    rowIds[size] = rowIds[i]!;
    slotOfKey.set(keys[size]!, size);
    slotOfRow.set(rowIds[size]!, size);
    size++;
  }
  keys.length = size;
  rowIds.length = size;
  const flags = new Uint8Array(size);
  const hashes = { source: new Int32Array(size), worksheet: new Int32Array(size) };
  const bit = (side: Side, source: number, rows: number) => (side === 'source' ? source : rows);
  // Row hashes: a linked record's in two halves by slot, any other's (few) as it came.
  let hashHalves: Int32Array | undefined;
  const otherHashes = new Map<string, string>();
  const otherFound = new Set<string>();

  return {
    size,
    key: (slot) => keys[slot]!,
    rowId: (slot) => rowIds[slot]!,
    linkedKey: (key) => slotOfKey.has(key),
    linkedRow: (rowId) => slotOfRow.has(rowId),
    see(side, id, matchKey) {
      const slot = (side === 'source' ? slotOfKey : slotOfRow).get(id);
      if (slot === undefined) return false;
      flags[slot]! |= bit(side, IN_SOURCE, IN_ROWS);
      hashes[side][slot] = hashOf(matchKey);
      return true;
    },
    seen: (slot, side) => (flags[slot]! & bit(side, IN_SOURCE, IN_ROWS)) !== 0,
    setQuiet(slot, side) {
      flags[slot]! |= bit(side, QUIET_SOURCE, QUIET_ROWS);
    },
    isQuiet: (slot, side) => (flags[slot]! & bit(side, QUIET_SOURCE, QUIET_ROWS)) !== 0,
    quietMatching(matchKeys) {
      const wanted = new Set<number>();
      for (const k of matchKeys) if (k !== '') wanted.add(hashOf(k));
      const out: number[] = [];
      if (wanted.size === 0) return out;
      for (let i = 0; i < size; i++) {
        const f = flags[i]!;
        if (
          ((f & QUIET_SOURCE) !== 0 && wanted.has(hashes.source[i]!)) ||
          ((f & QUIET_ROWS) !== 0 && wanted.has(hashes.worksheet[i]!))
        )
          out.push(i);
      }
      return out;
    },
    storeRowHash(key, hash) {
      const slot = slotOfKey.get(key);
      if (slot === undefined || !HEX16.test(hash)) {
        otherHashes.set(key, hash);
        return;
      }
      hashHalves ??= new Int32Array(2 * size);
      hashHalves[2 * slot] = highHalf(hash);
      hashHalves[2 * slot + 1] = lowHalf(hash);
      flags[slot]! |= HAS_HASH;
    },
    rowHashChanged(key, hash) {
      const slot = slotOfKey.get(key);
      if (slot !== undefined && hashHalves !== undefined && (flags[slot]! & HAS_HASH) !== 0) {
        flags[slot]! |= HASH_FOUND;
        return (
          !HEX16.test(hash) ||
          hashHalves[2 * slot] !== highHalf(hash) ||
          hashHalves[2 * slot + 1] !== lowHalf(hash)
        );
      }
      const stored = otherHashes.get(key);
      if (stored === undefined) return true;
      otherFound.add(key);
      return stored !== hash;
    },
    unfoundRowHashes() {
      const out: string[] = [];
      for (let i = 0; i < size; i++)
        if ((flags[i]! & (HAS_HASH | HASH_FOUND)) === HAS_HASH) out.push(keys[i]!);
      for (const key of otherHashes.keys()) if (!otherFound.has(key)) out.push(key);
      return out;
    },
  };
}

/** The first and last 8 hex digits of a 16-digit row hash, as signed 32-bit integers. */
const highHalf = (hash: string) => parseInt(hash.slice(0, 8), 16) | 0;
const lowHalf = (hash: string) => parseInt(hash.slice(8), 16) | 0;

/** FNV-1a over the string's UTF-16 code units, as a signed 32-bit integer. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}
